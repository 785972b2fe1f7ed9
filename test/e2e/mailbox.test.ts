// Issue 21 item 1 with real sessions that end: a message to a session that ended waits in its
// tray, and the drain delivers it when a session with that id runs again (`claude --resume`).
// The built CLI, real processes.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../tools/identity/system.js';
import { type TempBus, runBin, useTempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

describe('a mailbox for a session that ended (issue 21 item 1)', () => {
  it('is left a message by name, told it waits, and the resumed session drains it', async () => {
    const cwd = join(bus.dir, 'work', 'api');
    const api = session({ name: 'api', cwd });
    expect(runBin(['send', 'going for lunch'], { env: api.env, cwd }).exitCode).toBe(0);
    api.kill();
    await waitFor(() => !processAlive(api.pid), { what: 'api to exit' });

    const sent = runBin(['send', '--to', 'api', 'the schema changed while you were out'], { env: bus.env, cwd: bus.home });
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stderr).toMatch(/^attend: waits for api \(gone\), last seen \d+s ago\n$/);

    // `claude --resume`: the same session id, a new process.
    const back = session({ name: 'api', cwd, sessionId: api.sessionId });
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: back.env, cwd });
    expect(drain.exitCode, drain.stderr).toBe(0);
    expect(drain.stdout).toContain('the schema changed while you were out');
  });

  it('a new session named like one that just ended is told apart (web-2) and reached by that name; the old name still reaches the old party', async () => {
    const old = session({ name: 'web', cwd: join(bus.dir, 'work', 'web1') });
    expect(runBin(['send', 'hi'], { env: old.env, cwd: old.cwd }).exitCode).toBe(0);
    old.kill();
    await waitFor(() => !processAlive(old.pid), { what: 'old web to exit' });
    const web = session({ name: 'web', cwd: join(bus.dir, 'work', 'web2') });
    // A name is not handed on straight after its party left ("The first hour" item 2): a message
    // meant for the old web must not reach a newcomer that took its name.
    const toNew = runBin(['send', '--to', 'web-2', 'for the live one', '--json'], { env: bus.env, cwd: bus.home });
    expect(toNew.exitCode, toNew.stderr).toBe(0);
    expect(JSON.parse(toNew.stdout).to).toBe(web.sessionId);
    const toOld = runBin(['send', '--to', 'web', 'for the old one', '--json'], { env: bus.env, cwd: bus.home });
    expect(toOld.exitCode, toOld.stderr).toBe(0);
    expect(JSON.parse(toOld.stdout).to).toBe(old.sessionId);
    expect(toOld.stderr).toMatch(/^attend: waits for web \(gone\), last seen \d+s ago\n$/);
  });
});
