// Attention (issue 23 §3): the `urgency` tag on the wire (ADR-401's rules for tagged fields:
// fixed writer order, the prose fence, legacy readers unaffected), its signature, and the
// rule every streaming conduit applies (what wakes now, what waits for the turn boundary).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Envelope, envelopeProblems, formatSignal, parseSignal, resolveEnvelope } from '../../tools/wire/envelope.js';
import { messageSigningBytes } from '../../tools/wire/sign.js';
import { clockTime, focusNote, wakesNow } from '../../tools/wire/attention.js';
import { planStreamWake } from '../../tools/wire/wake.js';
import { type DeliveryMessage, formatDrainMessage, formatObservation, planDrain } from '../../tools/wire/party.js';
import { messageHeader } from '../../tools/wire/render.js';
import { nameLookup } from '../../tools/wire/display.js';

const SID = '5f0c2a8e-1b7d-4c3e-9a6f-2d8b1e4c7a90';
const SIGID = '0mx26z5da000-04yqqgze';
const base: Envelope = { from: `claude:${SID}`, project: 'api', cwd: '/srv/api', fromKind: 'agent', fromId: SID, to: '*', body: 'deploy is broken' };

/**
 * A reader from before the tag (ADR-401's five tags, its fence): what an older attend on a
 * relay's other side makes of a line. Written out here so the test does not depend on the
 * parser it checks.
 */
function olderReader(line: string): { fields: Record<string, string>; body: string } {
  const known = new Set(['from_kind', 'from_id', 'on_behalf_of', 'to', 're']);
  const parts = line.split('|');
  const fields: Record<string, string> = {};
  let i = 3;
  for (; i < parts.length - 1; i++) {
    const seg = parts[i]!;
    const c = seg.indexOf(':');
    const key = seg.slice(0, c);
    if (c < 0 || !known.has(key) || key in fields) break;
    fields[key] = seg.slice(c + 1);
  }
  return { fields, body: parts.slice(i).join('|') };
}

describe('the urgency tag on the wire', () => {
  it('is written after re, the last of the fixed order, and only when set', () => {
    expect(formatSignal({ ...base, re: SIGID, urgency: 'urgent' })).toBe(`claude:${SID}|api|/srv/api|from_kind:agent|from_id:${SID}|to:*|re:${SIGID}|urgency:urgent|deploy is broken`);
    expect(formatSignal({ ...base, urgency: 'quiet' })).toBe(`claude:${SID}|api|/srv/api|from_kind:agent|from_id:${SID}|to:*|urgency:quiet|deploy is broken`);
    // A normal message is byte for byte what it was before the tag existed.
    expect(formatSignal(base)).toBe(`claude:${SID}|api|/srv/api|from_kind:agent|from_id:${SID}|to:*|deploy is broken`);
  });

  it('reads in any order, and round-trips', () => {
    expect(parseSignal(`claude:${SID}|api|/a|urgency:urgent|re:${SIGID}|to:*|hi`)).toMatchObject({ urgency: 'urgent', re: SIGID, to: '*', body: 'hi' });
    fc.assert(
      fc.property(fc.constantFrom('urgent' as const, 'quiet' as const, undefined), fc.option(fc.constant(SIGID), { nil: undefined }), fc.string(), (urgency, re, body) => {
        const env: Envelope = { ...base, body: `x${body}`, ...(urgency ? { urgency } : {}), ...(re ? { re } : {}) };
        expect(parseSignal(formatSignal(env))).toEqual(env);
      }),
    );
  });

  it('the fence: a value outside the two words, or a second urgency tag, is prose', () => {
    expect(parseSignal(`claude:${SID}|api|/a|to:*|urgency:high|now`)).toMatchObject({ body: 'urgency:high|now' });
    expect(parseSignal(`claude:${SID}|api|/a|to:*|urgency:quiet|urgency:urgent|x`)).toMatchObject({ urgency: 'quiet', body: 'urgency:urgent|x' });
    // A writer refuses a body a reader would take for the tag, unless the envelope carries it.
    expect(envelopeProblems({ ...base, body: 'urgency:urgent|pay attention' }).join()).toMatch(/begins with 'urgency:…\|'/);
    expect(envelopeProblems({ ...base, urgency: 'quiet', body: 'urgency:urgent|pay attention' })).toEqual([]);
  });

  it('legacy readers are unaffected: every tag they know is where it was, the message intact', () => {
    const line = formatSignal({ ...base, to: SID, re: SIGID, onBehalfOf: 'aaron', urgency: 'urgent' });
    const old = olderReader(line);
    expect(old.fields).toEqual({ from_kind: 'agent', from_id: SID, on_behalf_of: 'aaron', to: SID, re: SIGID });
    // What it cannot know it shows as text, so the mark still reaches its reader.
    expect(old.body).toBe('urgency:urgent|deploy is broken');
    // And a line from before the tag reads as a normal message here.
    const legacy = resolveEnvelope(parseSignal(`claude:${SID}|api|/a|re:${SIGID}|hello`)!, { kind: 'open' });
    expect(legacy.urgency).toBeUndefined();
    expect(wakesNow(legacy, null, 0)).toBe(true);
  });
});

describe('the signature covers urgency', () => {
  const f = (envelope: Envelope) => Buffer.from(messageSigningBytes({ id: 'i', dest: '*', host: 'h', envelope })).toString('hex');
  it('a line without it signs exactly as before (v1); with it, under v2', () => {
    const v1 = Buffer.from(messageSigningBytes({ id: 'i', dest: '*', host: 'h', envelope: base }));
    expect(v1.subarray(4, 4 + 17).toString()).toBe('attend/message/v1');
    const v2 = Buffer.from(messageSigningBytes({ id: 'i', dest: '*', host: 'h', envelope: { ...base, urgency: 'urgent' } }));
    expect(v2.subarray(4, 4 + 17).toString()).toBe('attend/message/v2');
  });
  it('adding, stripping or changing it changes the signed bytes', () => {
    const all = [f(base), f({ ...base, urgency: 'urgent' }), f({ ...base, urgency: 'quiet' }), f({ ...base, body: `urgency:urgent|${base.body}` })];
    expect(new Set(all).size).toBe(all.length);
  });
});

let n = 0;
function msg(over: Partial<DeliveryMessage> = {}): DeliveryMessage {
  n++;
  return { id: `id${String(n).padStart(6, '0')}`, scope: { kind: 'open' }, time: 1_000 + n, from: 'claude:other', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'other', to: '*', body: `body ${n}`, legacy: false, ...over };
}
const NOW = Date.UTC(2026, 11, 2, 10, 0);
const FOCUS = { since: NOW - 60_000, until: NOW + 45 * 60_000 };

describe('what wakes', () => {
  it.each([
    ['a normal message', {}, null, true],
    ['a quiet one', { urgency: 'quiet' as const }, null, false],
    ['a quiet one from a person', { urgency: 'quiet' as const, fromKind: 'human' as const }, null, false],
    ['in focus: an agent’s message', {}, FOCUS, false],
    ['in focus: a person’s', { fromKind: 'human' as const }, FOCUS, true],
    ['in focus: an urgent one', { urgency: 'urgent' as const }, FOCUS, true],
    ['a focus that has ended', {}, { since: NOW - 7_200_000, until: NOW - 1 }, true],
  ])('%s', (_what, over, focus, wakes) => {
    expect(wakesNow(msg(over), focus, NOW)).toBe(wakes);
  });

  it('a streaming wake shows only what wakes, and never folds an urgent message into the digest', () => {
    const quiet = msg({ urgency: 'quiet' });
    const agent = msg();
    const person = msg({ fromKind: 'human', fromId: 'aaron' });
    const plan = planStreamWake({ fresh: [quiet, agent, person], hidden: 0, invited: [], taught: true, me: 'me', attention: { focus: FOCUS, now: NOW } });
    expect(plan.full.map((m) => m.id)).toEqual([person.id]);
    const flood = Array.from({ length: 12 }, () => msg());
    const urgent = msg({ urgency: 'urgent' });
    const big = planStreamWake({ fresh: [...flood, urgent], hidden: 0, invited: [], taught: true, me: 'me' });
    expect(big.full.map((m) => m.id)).toEqual([urgent.id]);
    expect(big.digest?.ids).toHaveLength(12);
  });

  it('the drain puts urgent messages first and never collapses one', () => {
    const a = msg();
    const u = msg({ urgency: 'urgent' });
    const items = planDrain([a, u], 'me', new Map());
    expect(items[0]).toEqual({ kind: 'message', message: u });
  });

  it('is marked in the header, the Monitor line and the drain', () => {
    const u = msg({ urgency: 'urgent' });
    const names = nameLookup([], 'me');
    expect(messageHeader(u, u.id)).toMatch(/ urgency=urgent id=/);
    expect(formatObservation(u, names)[1]).toMatch(/^URGENT message from /);
    expect(formatDrainMessage(u, names, NOW)[1]).toMatch(/^URGENT message from /);
    expect(messageHeader(msg(), 'x')).not.toMatch(/urgency/);
  });

  it('a sender is told when a recipient in focus will see it', () => {
    expect(focusNote('codex-api', FOCUS)).toBe(`codex-api is in focus until ${clockTime(FOCUS.until)}; shown at its next turn boundary`);
    expect(clockTime(FOCUS.until)).toMatch(/^\d\d:\d\d$/);
  });
});
