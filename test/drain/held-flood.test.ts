// A flood of held lines (issue 20, attack 9): 20,000 hand-written lines in a session's tray,
// each claiming a signing node as its sender without a signature, newer than one genuine
// signed message. The session's first drain must still deliver the genuine one (signed
// messages come first in a cold start's window), and the person still lists the flood with
// `attend inbox --held`. In-process, on a real temporary bus.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DrainDeps, drainOnce } from '../../tools/drain/drain.js';
import { createReporter, scopeDir } from '../../tools/bus/store/index.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { createSigner } from '../../tools/bus/trust/signing.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { runInbox } from '../../tools/verbs/inbox.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { nameLookup } from '../../tools/wire/display.js';
import { ids } from '../helpers/fixtures.js';
import { type TempBus, useFamilyPolicy, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const FLOOD = 20_000;

function deps(out: string[]): DrainDeps {
  return { root: bus.root, now: Date.now, reporter: createReporter(() => {}), names: (me) => nameLookup([], me), write: (t) => out.push(t), warn: () => {} };
}

describe('a flood of held lines', { timeout: 60_000 }, () => {
  it('does not hide a genuine older message from the first drain, and the person still lists the flood', () => {
    // About the cost of held lines, not about groups: the lead and the bot may reach each other.
    useFamilyPolicy(bus);
    const cwd = join(bus.home, 'work');
    mkdirSync(cwd, { recursive: true });
    const env = { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-flood' };
    const who = createVerbCtx({ env, cwd, pid: process.pid }).identity();
    const tray: Scope = { kind: 'tray', key: attendKey(cwd) };
    const signer = createSigner({ keysDir: join(bus.home, '.config', 'attend', 'keys'), root: bus.root, host: 'devbox', now: Date.now });
    // The genuine message, signed by the lead, a minute older than the flood.
    const old = ids(() => Date.now() - 60_000)();
    writeSignal(bus.root, tray, old, { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: who.id, body: 'GENUINE-OLDER' }, signer);
    // The flood: written by hand, so no signature, claiming the lead (who signs).
    const dir = scopeDir(bus.root, tray);
    const newId = ids();
    for (let i = 0; i < FLOOD; i++) writeFileSync(join(dir, `${newId()}.signal`), `claude:sid-lead|p|/p|from_kind:agent|from_id:sid-lead|to:${who.id}|forged ${i}\n`);

    const out: string[] = [];
    const first = drainOnce(deps(out), who, { stopHookActive: false }, 'plain');
    expect(first.shown).toEqual([old]);
    expect(out.join('')).toContain('GENUINE-OLDER');
    expect(out.join('')).not.toContain('forged');

    // The person who owns the bus still sees what is held, with the reason.
    const person = createVerbCtx({ env: bus.env, cwd, pid: process.pid });
    const held = runInbox(person, { limit: 5, page: 1, held: true });
    expect(held.total).toBe(FLOOD);
    expect(held.messages.every((m) => m.body.startsWith('forged ') && m.heldReason === 'bad signature: unsigned, but sid-lead signs its messages')).toBe(true);
  });
});
