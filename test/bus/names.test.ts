// Names that say what a party is and stay put (issue "The first hour", item 2), on a real
// temporary bus: agents named by their CLI or harness and their project, a second arrival
// never renaming the first, every earlier name still resolving, and an earlier name two
// parties shared refused with the candidates. One resolver: the CLI's --to, the chat's
// @name and MCP `to` all go through lookupTarget over the verbs' address book.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { lookupTarget } from '../../tools/bus/presence/index.js';
import { namesFile, readKnownEntries } from '../../tools/bus/presence/names.js';
import { addressBook } from '../../tools/verbs/address.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { parseSignal } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { type TempBus, runInProcess, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

interface PeerJson {
  id: string;
  name: string;
}

async function peers(): Promise<PeerJson[]> {
  const r = await runInProcess(['peers', '--json'], { env: bus.env });
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { peers: PeerJson[] }).peers;
}

const nameOf = (list: PeerJson[], id: string) => list.find((p) => p.id === id)?.name;

/** An agent CLI seen live at `origin` (its drain's record, as `attend inbox --drain` writes it). */
function agentAt(id: string, origin: string): void {
  mkdirSync(origin, { recursive: true });
  writePresence(bus.root, { id, kind: 'agent', origin, heartbeat: Date.now(), role: 'drain' });
}

function toOf(sent: { stdout: string }, origin: string): string | undefined {
  const id = JSON.parse(sent.stdout).id as string;
  return parseSignal(readFileSync(join(bus.root, 'signals', attendKey(origin), `${id}.signal`), 'utf8').trimEnd())?.to;
}

describe('agents are named by their CLI and project', () => {
  it('Codex and Gemini in one directory are codex-api and gemini-api; a second Codex is codex-api-2 and the first keeps its name', async () => {
    const api = join(bus.dir, 'work', 'api');
    agentAt('codex-1a2b.3c4d', api);
    let list = await peers();
    expect(nameOf(list, 'codex-1a2b.3c4d')).toBe('codex-api');
    agentAt('gemini-5e6f.7a8b', api);
    agentAt('codex-9z9z.1y1y', api);
    // A declared harness, in the form with its user and in the older one with an instance.
    agentAt('mybot.w1@dev', api);
    agentAt('ci-runner7', join(bus.dir, 'work', 'infra'));
    list = await peers();
    expect(nameOf(list, 'codex-1a2b.3c4d')).toBe('codex-api');
    expect(nameOf(list, 'gemini-5e6f.7a8b')).toBe('gemini-api');
    expect(nameOf(list, 'codex-9z9z.1y1y')).toBe('codex-api-2');
    expect(nameOf(list, 'mybot.w1@dev')).toBe('mybot-api');
    expect(nameOf(list, 'ci-runner7')).toBe('ci-infra');
    // `--to codex-api` still reaches the first.
    const sent = await runInProcess(['send', '--to', 'codex-api', '--json', 'for the first codex'], { env: bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(toOf(sent, api)).toBe('codex-1a2b.3c4d');
  });

  it('a session is called by Claude Code\'s own name; renamed there, its old name still reaches it', async () => {
    const s = session({ name: 'parser-work', cwd: join(bus.dir, 'work', 'lang') });
    expect(nameOf(await peers(), s.sessionId)).toBe('parser-work');
    // Claude Code renames the session (its record's `name`).
    const recFile = join(bus.claudeDir, 'sessions', `${s.pid}.json`);
    writeFileSync(recFile, JSON.stringify({ ...JSON.parse(readFileSync(recFile, 'utf8')), name: 'lexer-work' }));
    expect(nameOf(await peers(), s.sessionId)).toBe('lexer-work');
    const sent = await runInProcess(['send', '--to', 'parser-work', '--json', 'by the old name'], { env: bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(toOf(sent, s.cwd)).toBe(s.sessionId);
  });

  it('two sessions Claude Code gave one name are told apart by a suffix, the first keeping it', async () => {
    const a = session({ name: 'review', cwd: join(bus.dir, 'work', 'a') });
    expect(nameOf(await peers(), a.sessionId)).toBe('review');
    const b = session({ name: 'review', cwd: join(bus.dir, 'work', 'b') });
    const list = await peers();
    expect(nameOf(list, a.sessionId)).toBe('review');
    expect(nameOf(list, b.sessionId)).toBe('review-2');
  });
});

describe('earlier names', () => {
  /** A names file as attend wrote it before names were given (ordinals, v1). */
  function v1(entries: Record<string, { name: string; origin: string; seen: number }>): void {
    mkdirSync(join(bus.root, 'state'), { recursive: true });
    const names = Object.fromEntries(Object.entries(entries).map(([id, e]) => [id, { name: e.name, at: e.seen, kind: 'agent', origin: e.origin, seen: e.seen }]));
    writeFileSync(namesFile(bus.root), JSON.stringify({ v: 1, names }));
  }

  it('a name from before (Abe-alpha) still reaches the party now called codex-api', async () => {
    const api = join(bus.dir, 'work', 'api');
    v1({ 'codex-1a2b.3c4d': { name: 'Abe-alpha', origin: api, seen: Date.now() } });
    agentAt('codex-1a2b.3c4d', api);
    expect(nameOf(await peers(), 'codex-1a2b.3c4d')).toBe('codex-api');
    expect(readKnownEntries(bus.root)['codex-1a2b.3c4d']?.aliases).toEqual(['Abe-alpha']);
    const sent = await runInProcess(['send', '--to', 'Abe-alpha', '--json', 'by the old name'], { env: bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(toOf(sent, api)).toBe('codex-1a2b.3c4d');
  });

  it('an earlier name two parties had is refused as ambiguous, naming both', async () => {
    const api = join(bus.dir, 'work', 'api');
    const web = join(bus.dir, 'work', 'web');
    const long = Date.now() - 3_600_000;
    v1({ 'codex-aaaa.1111': { name: 'Abe', origin: api, seen: long }, 'gemini-bbbb.2222': { name: 'Abe', origin: web, seen: long } });
    agentAt('codex-aaaa.1111', api);
    agentAt('gemini-bbbb.2222', web);
    const list = await peers();
    expect(nameOf(list, 'codex-aaaa.1111')).toBe('codex-api');
    expect(nameOf(list, 'gemini-bbbb.2222')).toBe('gemini-web');
    const sent = await runInProcess(['send', '--to', 'Abe', 'who?'], { env: bus.env });
    expect(sent.exitCode).toBe(2);
    expect(sent.stderr).toContain("'Abe' is ambiguous");
    expect(sent.stderr).toContain('codex-api (agent, codex-aaaa.1111)');
    expect(sent.stderr).toContain('gemini-web (agent, gemini-bbbb.2222)');
  });

  it('the chat and MCP resolve through the same address book: an earlier name, and the ambiguity', () => {
    const api = join(bus.dir, 'work', 'api');
    const web = join(bus.dir, 'work', 'web');
    v1({ 'codex-aaaa.1111': { name: 'Abe', origin: api, seen: 1 }, 'gemini-bbbb.2222': { name: 'Abe', origin: web, seen: 1 }, 'aider-cccc.3333': { name: 'Bo-beta', origin: web, seen: 1 } });
    agentAt('codex-aaaa.1111', api);
    agentAt('gemini-bbbb.2222', web);
    agentAt('aider-cccc.3333', web);
    const ctx = createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid });
    const book = addressBook(ctx);
    // The chat asks with a unique prefix allowed; the send (CLI, MCP) without.
    for (const opts of [book.opts, { ...book.opts, namePrefix: true }]) {
      const one = lookupTarget('bo-beta', book.peers, opts);
      expect(one.ok && one.peers.map((p) => p.id)).toEqual(['aider-cccc.3333']);
      const two = lookupTarget('Abe', book.peers, opts);
      expect(two.ok === false && two.problem === 'ambiguous' && two.candidates.map((p) => p.id).sort()).toEqual(['codex-aaaa.1111', 'gemini-bbbb.2222']);
    }
  });
});
