// Fixtures for the delivery tests, in-process: write messages straight through the bus library
// (as `attend send` does), make identities, and read the ids a sensor or drain printed.
// ./delivery.ts adds a real `attend run` child process, for the e2e tier.

import type { Identity } from '../../tools/identity/resolve.js';
import { ME } from './temp-bus.js';
import { newChannel, updateChannels } from '../../tools/bus/channels/membership.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { createIdFactory } from '../../tools/wire/ids.js';

/**
 * The person of a fixture bus: who `put` writes as by default, and the `user` of every
 * identity `agent` makes — the user the tests run as, as for the CLI run in-process. Only the
 * person of the bus can be a person (issue 20 attack 6), so a reader and the human messages
 * it reads must agree on who that is.
 */
export const PERSON = ME;

export function agent(id: string, origin: string): Identity {
  return { resolved: true, reason: 'test', kind: 'agent', id, from: `claude:${id}`, origin, user: PERSON, sessionId: id };
}

/** An id factory; `at` makes ids for a given time (history in the past). */
export function ids(at?: () => number): () => string {
  return createIdFactory({ now: at ?? Date.now, pid: process.pid + 7, random: Math.random });
}

export interface Put {
  scope: Scope;
  body: string;
  to: string;
  fromId?: string;
  fromKind?: 'agent' | 'human';
  re?: string;
  id?: string;
}

export function put(root: string, newId: () => string, p: Put): string {
  const id = p.id ?? newId();
  const fromKind = p.fromKind ?? 'human';
  const fromId = p.fromId ?? PERSON;
  writeSignal(root, p.scope, id, {
    from: fromKind === 'agent' ? `claude:${fromId}` : `external:${fromId}@pts-1`,
    project: 'proj',
    cwd: '/srv/proj',
    fromKind,
    fromId,
    to: p.to,
    ...(p.re !== undefined ? { re: p.re } : {}),
    body: p.body,
  });
  return id;
}

export function join(root: string, channel: string, id: string, now = Date.now()): void {
  updateChannels(root, (s) => {
    s.channels[channel] ??= newChannel(now);
    s.channels[channel]!.members[id] = { kind: 'agent', joined: now };
  });
}

export function leave(root: string, channel: string, id: string): void {
  updateChannels(root, (s) => {
    delete s.channels[channel]?.members[id];
  });
}

const HEADER = /^\[attend message .* id=([A-Za-z0-9_-]+)\]$/;
/** Ids named by `[attend message ... id=...]` header lines. */
export function headerIds(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = HEADER.exec(line);
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

/** Ids named by `attend: trace ...` stderr lines (digests, collapsed threads, remainders). */
export function traceIds(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('attend: trace ')) continue;
    for (const m of line.matchAll(/(?:ids|collapsed|overflow)=([A-Za-z0-9_,-]*)/g)) out.push(...(m[1] ?? '').split(',').filter(Boolean));
  }
  return out;
}
