// The web's owner tab asks for what is held at every arrival (issue 24, scale): createHeldWatch
// reads every directory at its first look and then only what arrived since, and says the
// same as a full read (`readInbox({ held: true })`) at every step: a new held message, a new
// genuine one, a held one deleted, and a policy change that decides differently.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scopeDir } from '../../tools/bus/store/index.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { createSigner } from '../../tools/bus/trust/signing.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { createHeldWatch, readInbox } from '../../tools/verbs/inbox.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { ids } from '../helpers/fixtures.js';
import { type TempBus, useFamilyPolicy, useTempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

describe('createHeldWatch', () => {
  it('lists what a full read lists, newest first, reading only what is new after the first look', async () => {
    useFamilyPolicy(bus);
    const cwd = join(bus.home, 'work');
    mkdirSync(cwd, { recursive: true });
    const tray: Scope = { kind: 'tray', key: attendKey(cwd) };
    const signer = createSigner({ keysDir: join(bus.home, '.config', 'attend', 'keys'), root: bus.root, host: 'devbox', now: Date.now });
    const next = ids();
    // sid-lead signs: a line claiming it without a signature is held.
    writeSignal(bus.root, tray, next(), { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: 'sid-x', body: 'GENUINE' }, signer);
    const dir = scopeDir(bus.root, tray);
    const forge = (body: string) => {
      const id = next();
      writeFileSync(join(dir, `${id}.signal`), `claude:sid-lead|p|/p|from_kind:agent|from_id:sid-lead|to:sid-x|${body}\n`);
      return id;
    };
    const f1 = forge('forged one');
    const person = () => createVerbCtx({ env: bus.env, cwd, pid: process.pid });
    const watch = createHeldWatch();
    const full = () => readInbox(person(), { held: true }).map((m) => m.id).reverse();
    const listed = () => watch.list(person(), 100).map((m) => m.id);

    // A hand-written file (no index line) reaches the listing once the directory settles.
    await waitFor(() => listed().includes(f1), { what: 'the forged line listed' });
    expect(listed()).toEqual([f1]);
    expect(listed()).toEqual(full());
    const f2 = forge('forged two');
    writeSignal(bus.root, tray, next(), { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: 'sid-x', body: 'GENUINE 2' }, signer);
    await waitFor(() => listed().includes(f2), { what: 'the second forged line listed' });
    expect(listed()).toEqual([f2, f1]);
    expect(listed()).toEqual(full());
    // A late arrival: a line whose id is ten minutes old, written now, far below the floor
    // (older than sid-lead's key, so a claim of a person who is not this bus's person).
    const late = ids(() => Date.now() - 600_000)();
    writeFileSync(join(dir, `${late}.signal`), `human:mallory|p|/p|from_kind:human|from_id:mallory|to:sid-x|forged late\n`);
    await waitFor(() => listed().includes(late), { what: 'the late forged line listed' });
    expect(listed()).toEqual([f2, f1, late]);
    expect(listed()).toEqual(full());
    rmSync(join(dir, `${late}.signal`));
    expect(watch.list(person(), 1).map((m) => m.heldReason)).toEqual(['bad signature: unsigned, but sid-lead signs its messages']);
    // Deleted (a cleanup): no longer listed.
    rmSync(join(dir, `${f1}.signal`));
    expect(listed()).toEqual([f2]);
    expect(listed()).toEqual(full());
    // A session may not look.
    const worker = createVerbCtx({ env: { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'w1' }, cwd, pid: process.pid });
    expect(() => watch.list(worker, 10)).toThrow(/only to the person/);
  });
});
