// Issue #10 item 16: the names of ended sessions. A party's last known display name is kept
// under the bus root and shown, marked as gone, where its raw id used to appear; reading never
// rewrites that file when nothing changed. Real processes: the built CLI, the drain, a sensor.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { namesFile, readKnownNames } from '../../tools/bus/presence/names.js';
import { type TempBus, runBin, useTempBus, waitFor } from '../helpers/bus.js';
import { type SensorProc, startSensor } from '../helpers/delivery.js';

let bus: TempBus;
const session = useTempBus((b) => {
  bus = b;
});

const asHuman = (args: string[]) => runBin(args, { env: bus.env, cwd: bus.home });

describe('names of ended sessions', () => {
  it('history shows the last known name marked as gone, in the inbox and the drain', () => {
    const api = session({ name: 'api', cwd: join(bus.dir, 'work', 'api') });
    const web = session({ name: 'web', cwd: join(bus.dir, 'work', 'web') });
    const sent = runBin(['send', 'schema changed, regenerate the client'], { env: api.env, cwd: api.cwd });
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(readKnownNames(bus.root).get(api.sessionId)).toBe('api');
    api.kill();

    const inbox = asHuman(['inbox']);
    expect(inbox.exitCode, inbox.stderr).toBe(0);
    // The block names the sender and, as always, its id beside the name.
    expect(inbox.stdout).toContain(`from: api (gone) (agent, ${api.sessionId})`);

    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: web.env, cwd: web.cwd });
    // Someone else's #open message is collapsed for web; the line names the gone sender.
    expect(drain.stdout).toMatch(/^\[1 message, api \(gone\), #open, \d+s ago\]$/m);
  });

  it('the sensor names a gone sender the same way', async () => {
    const api = session({ name: 'api', cwd: join(bus.dir, 'work', 'api') });
    const web = session({ name: 'web', cwd: join(bus.dir, 'work', 'web') });
    expect(asHuman(['peers']).exitCode).toBe(0); // both seen live: names remembered
    const sent = runBin(['send', 'last words'], { env: api.env, cwd: api.cwd });
    expect(sent.exitCode).toBe(0);
    api.kill();
    const p: SensorProc = startSensor(web.env, [], web.cwd);
    try {
      await waitFor(() => p.stdout().includes('last words'), { what: 'the message' });
      expect(p.stdout()).toContain('message from api (gone) (agent, to #open): last words');
    } finally {
      p.proc.kill('SIGKILL');
      await p.exited;
    }
  });

  it('reading never rewrites the names file when nothing changed', () => {
    const api = session({ name: 'api', cwd: join(bus.dir, 'work', 'api') });
    expect(runBin(['send', 'hello'], { env: api.env, cwd: api.cwd }).exitCode).toBe(0);
    const file = namesFile(bus.root);
    const before = { text: readFileSync(file, 'utf8'), mtime: statSync(file, { bigint: true }).mtimeNs, ino: statSync(file).ino };
    for (const args of [['inbox'], ['peers'], ['status']]) expect(asHuman(args).exitCode).toBe(0);
    expect(runBin(['inbox'], { env: api.env, cwd: api.cwd }).exitCode).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(before.text);
    expect(statSync(file, { bigint: true }).mtimeNs).toBe(before.mtime);
    expect(statSync(file).ino).toBe(before.ino);
    // A renamed session is a change: written once, with the new name.
    api.kill();
    const again = session({ name: 'api-v2', cwd: join(bus.dir, 'work', 'api'), sessionId: api.sessionId });
    expect(asHuman(['peers']).exitCode).toBe(0);
    expect(readKnownNames(bus.root).get(again.sessionId)).toBe('api-v2');
  });
});
