// Held verdicts kept under the stamp of the trust inputs (issue 20, must-have 5): a verdict a
// reader found is reused by a later reader without deciding again, a stretch of held entries
// becomes one run a listing steps over, and each change of what decided it — a key that
// appears, a key rotated, the policy edited by attend or by hand — makes readers decide
// again. A file that arrives later inside a run's range is not covered by it: the drain
// delivers it. In-process, on a real temporary bus.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type DrainDeps, drainOnce } from '../../tools/drain/drain.js';
import { createReporter, listingCacheDir, readMessage, scopeDir, scopeDirName } from '../../tools/bus/store/index.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { rotateKey } from '../../tools/bus/trust/keys.js';
import { createGate, createHeldCheck, policyFile, updatePolicy } from '../../tools/bus/trust/index.js';
import { createSigner } from '../../tools/bus/trust/signing.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { RUN_SLACK_MS, runInbox } from '../../tools/verbs/inbox.js';
import type { Identity } from '../../tools/identity/resolve.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { nameLookup } from '../../tools/wire/display.js';
import { PERSON, ids } from '../helpers/fixtures.js';
import { type TempBus, useFamilyPolicy, useTempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const FORGED = 300;
const REASON = 'bad signature: unsigned, but sid-lead signs its messages';

interface World {
  who: Identity;
  tray: Scope;
  keysDir: string;
  forged: string[];
  t0: number;
}

let w: World;

beforeEach(async () => {
  useFamilyPolicy(bus);
  const cwd = join(bus.home, 'work');
  const env = { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-verdicts' };
  const who = createVerbCtx({ env, cwd, pid: process.pid }).identity();
  const tray: Scope = { kind: 'tray', key: attendKey(cwd) };
  const keysDir = join(bus.home, '.config', 'attend', 'keys');
  // The lead signs (it has a key, made before the forged lines that claim it: an unsigned
  // line older than a node's first key is from before it signed), a minute ago.
  const t0 = Date.now() - 60_000;
  const signer = createSigner({ keysDir, root: bus.root, host: 'devbox', now: () => t0 - 5_000 });
  writeSignal(bus.root, tray, ids(() => t0 - 1_000)(), { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: who.id, body: 'GENUINE-FIRST' }, signer);
  const dir = scopeDir(bus.root, tray);
  const forged: string[] = [];
  // One forged line per millisecond from t0, so a later id can fall between two of them.
  for (let i = 0; i < FORGED; i++) {
    const id = ids(() => t0 + i * 2)();
    forged.push(id);
    writeFileSync(join(dir, `${id}.signal`), `claude:sid-lead|p|/p|from_kind:agent|from_id:sid-lead|to:${who.id}|forged ${i}\n`);
  }
  w = { who, tray, keysDir, forged, t0 };
  // A run covers only files older than its walk by RUN_SLACK_MS (a file that came just
  // before may not be in the listing yet): the walks below start once that is so.
  const newest = statSync(join(dir, `${forged[FORGED - 1]}.signal`)).ctimeMs;
  await waitFor(() => Date.now() > newest + RUN_SLACK_MS, { what: 'the forged lines to be older than the slack of a walk' });
});

function inboxAsSession() {
  const ctx = createVerbCtx({ env: { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-verdicts' }, cwd: join(bus.home, 'work'), pid: process.pid });
  return runInbox(ctx, { limit: 20, page: 1 });
}

/** What a reader that opens the kept verdicts now says of one forged file, before reading it. */
function keptFor(id: string): string | null {
  const check = createHeldCheck(bus.root, createGate(bus.root, w.who));
  const a = check.admit(w.tray, id);
  return typeof a === 'string' ? a : null;
}

function heldFile(): { runs: [string, string, number, number, string][]; held: Record<string, string> } {
  return JSON.parse(readFileSync(join(listingCacheDir(bus.root, scopeDirName(w.tray)), 'held.json'), 'utf8'));
}

/** List until every forged line was verified (each pass verifies at most 200 new files). */
function verifyAll(): void {
  for (let i = 0; i < 10; i++) if (inboxAsSession().unchecked === undefined) return;
  throw new Error('the inbox never verified the forged lines');
}

function deps(out: string[]): DrainDeps {
  return { root: bus.root, now: Date.now, reporter: createReporter(() => {}), names: (me) => nameLookup([], me), write: (t) => out.push(t), warn: () => {} };
}

describe('held verdicts', { timeout: 60_000 }, () => {
  it('are reused by a later reader, as one run the listing steps over', () => {
    verifyAll();
    const file = heldFile();
    // The forged lines are one run (newest to oldest, all of them), not a record per file.
    expect(file.runs).toHaveLength(1);
    expect(file.runs[0]?.slice(0, 3)).toEqual([w.forged[0], w.forged[FORGED - 1], FORGED]);
    expect(Object.keys(file.held)).toHaveLength(0);
    // A later reader takes the verdict without reading the file...
    expect(keptFor(w.forged[17]!)).toBe(REASON);
    // ...and a later listing shows the genuine message alone, verifying nothing again.
    const page = inboxAsSession();
    expect(page.unchecked).toBeUndefined();
    expect(page.messages.map((m) => m.body)).toEqual(['GENUINE-FIRST']);
  });

  it('are decided again once a key appears', () => {
    verifyAll();
    expect(keptFor(w.forged[0]!)).toBe(REASON);
    // A node's first signed message makes its key.
    const signer = createSigner({ keysDir: w.keysDir, root: bus.root, host: 'devbox', now: Date.now });
    writeSignal(bus.root, { kind: 'open' }, ids()(), { from: 'claude:sid-new', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-new', body: 'hello' }, signer);
    expect(keptFor(w.forged[0]!)).toBeNull();
  });

  it('are decided again once a key is rotated', () => {
    verifyAll();
    rotateKey({ keysDir: w.keysDir, root: bus.root, node: 'sid-lead', now: Date.now() });
    expect(keptFor(w.forged[0]!)).toBeNull();
    // Decided again, the same: still held, and kept under the new stamp.
    const m = readMessage(bus.root, w.tray, w.forged[0]!, createReporter(() => {}));
    const check = createHeldCheck(bus.root, createGate(bus.root, w.who));
    expect(check.held(m!)).toBe(REASON);
    check.save();
    expect(keptFor(w.forged[0]!)).toBe(REASON);
  });

  it('are decided again once the policy is edited, by attend or by hand', () => {
    verifyAll();
    updatePolicy(bus.root, { kind: 'human', id: PERSON }, (p) => {
      p.mode = 'family';
    });
    expect(keptFor(w.forged[0]!)).toBeNull();
    verifyAll();
    expect(keptFor(w.forged[0]!)).toBe(REASON);
    // By hand: the same text written again is another file (a new inode and mtime).
    writeFileSync(policyFile(bus.root), readFileSync(policyFile(bus.root), 'utf8') + '\n');
    expect(keptFor(w.forged[0]!)).toBeNull();
  });

  it('do not cover a genuine message that arrives later inside a run: the drain delivers it and the inbox shows it', () => {
    // The session's drain consumes the genuine message and, by the kept verdicts, the flood.
    verifyAll();
    const out: string[] = [];
    expect(drainOnce(deps(out), w.who, { stopHookActive: false }, 'plain').shown).toHaveLength(1);
    // A genuine signed message whose id sorts inside the run (a late arrival: a relay's
    // import after an outage has such ids).
    const signer = createSigner({ keysDir: w.keysDir, root: bus.root, host: 'devbox', now: Date.now });
    const late = ids(() => w.t0 + 101)();
    expect(late > w.forged[0]! && late < w.forged[FORGED - 1]!).toBe(true);
    writeSignal(bus.root, w.tray, late, { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: w.who.id, body: 'GENUINE-LATE' }, signer);
    const out2: string[] = [];
    const second = drainOnce(deps(out2), w.who, { stopHookActive: false }, 'plain');
    expect(second.shown).toEqual([late]);
    expect(out2.join('')).toContain('GENUINE-LATE');
    // The listing no longer holds what the run held, so it is not stepped over.
    expect(inboxAsSession().messages.map((m) => m.body)).toEqual(['GENUINE-LATE', 'GENUINE-FIRST']);
  });
});
