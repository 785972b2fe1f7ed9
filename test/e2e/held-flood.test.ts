// A flood of held lines (issue 20, attack 9), as real processes: 20,000 lines written by hand
// into a session's tray, each claiming a signing node (the lead) without a signature, all
// newer than one genuine message the lead signed. The session's first Stop-hook drain (an
// `attend inbox --drain` process) delivers the genuine one and nothing forged; `attend inbox`
// lists the genuine one alone (once later listings have verified the flood, capped per pass);
// the person still lists the flood with `attend inbox --held`, each with the reason.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { scopeDir } from '../../tools/bus/store/index.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { createSigner } from '../../tools/bus/trust/signing.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { type FakeSession, type TempBus, runBin, useFamilyPolicy, useTempBus } from '../helpers/bus.js';
import { ids } from '../helpers/delivery.js';

let bus: TempBus;
let s: FakeSession;
const newSession = useTempBus((b) => (bus = b));
beforeEach(() => {
  s = newSession({ name: 'bot' });
});

const FLOOD = 20_000;
const REASON = 'bad signature: unsigned, but sid-lead signs its messages';

describe('a flood of held lines, as processes (attack 9)', { timeout: 180_000 }, () => {
  it("does not push a genuine older message out of the session's first drain; the inbox shows it alone; the person lists the flood", () => {
    // About held lines, not groups: the lead (no lineage here) may reach the session.
    useFamilyPolicy(bus);
    const tray: Scope = { kind: 'tray', key: attendKey(s.cwd) };
    const signer = createSigner({ keysDir: join(bus.home, '.config', 'attend', 'keys'), root: bus.root, host: 'devbox', now: () => Date.now() - 120_000 });
    const genuine = ids(() => Date.now() - 60_000)();
    writeSignal(bus.root, tray, genuine, { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: s.sessionId, body: 'GENUINE-OLDER' }, signer);
    const dir = scopeDir(bus.root, tray);
    const newId = ids();
    for (let i = 0; i < FLOOD; i++) writeFileSync(join(dir, `${newId()}.signal`), `claude:sid-lead|p|/p|from_kind:agent|from_id:sid-lead|to:${s.sessionId}|forged ${i}\n`, { mode: 0o600 });

    const payload = JSON.stringify({ session_id: s.sessionId, hook_event_name: 'Stop', stop_hook_active: false, transcript_path: '/x' });
    const first = runBin(['inbox', '--drain', '--format', 'hook'], { env: s.env, cwd: s.cwd, input: payload });
    expect(first.exitCode).toBe(0);
    const context = (JSON.parse(first.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    expect(context).toContain('GENUINE-OLDER');
    expect(context).toContain(`id=${genuine}]`);
    expect(context).not.toContain('forged');

    // Each listing verifies at most 200 files it has no verdict for; the rest are never
    // shown. Listings until the flood is verified (bounded: 20,000 / 200 passes and a few).
    let inbox = runBin(['inbox'], { env: s.env, cwd: s.cwd });
    for (let pass = 0; inbox.stderr.includes('not verified yet') && pass < FLOOD / 200 + 5; pass++) {
      expect(inbox.stdout).not.toContain('forged');
      inbox = runBin(['inbox'], { env: s.env, cwd: s.cwd });
    }
    expect(inbox.exitCode).toBe(0);
    expect(inbox.stderr).not.toContain('not verified yet');
    expect(inbox.stdout).toContain('GENUINE-OLDER');
    expect(inbox.stdout).not.toContain('forged');

    // The person who owns the bus still sees what is held, with the reason.
    const held = runBin(['inbox', '--held', '--json'], { env: bus.env, cwd: s.cwd });
    expect(held.exitCode).toBe(0);
    const out = JSON.parse(held.stdout) as { total: number; messages: { body: string; held?: string }[] };
    expect(out.total).toBe(FLOOD);
    expect(out.messages.length).toBeGreaterThan(0);
    expect(out.messages.every((m) => m.body.startsWith('forged ') && m.held === REASON)).toBe(true);
  });
});
