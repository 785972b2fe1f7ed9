// Another machine, in-process: what its relay would bring onto this bus. Its messages are
// signed with keys it made, which this bus's relay records as that machine's (issue 13), so
// every reader here takes them for that machine's parties (`<host>:<id>`,
// tools/bus/trust/origin.ts). No relay runs and no process starts: the unit tier may use it.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { recordRemoteKeys } from '../../tools/bus/trust/remote-keys.js';
import { createSigner } from '../../tools/bus/trust/signing.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import type { TempBus } from './temp-bus.js';

export interface RemoteMachine {
  /** Write a message from `fromId` of that machine into `scope` here; returns its id. */
  write(scope: Scope, m: { fromId: string; fromKind: 'agent' | 'human'; to: string; body: string; re?: string }): string;
  cleanup(): void;
}

/** `host` on the hub, writing to `bus`, which is `localHost` there. */
export function remoteMachine(bus: TempBus, host: string, localHost: string): RemoteMachine {
  const dir = mkdtempSync(join(tmpdir(), `attend-${host}-`));
  const root = join(dir, 'bus');
  mkdirSync(root, { mode: 0o700 });
  const signer = createSigner({ keysDir: join(dir, 'keys'), root, host, now: Date.now });
  mkdirSync(join(bus.root, 'relay'), { recursive: true, mode: 0o700 });
  writeFileSync(join(bus.root, 'relay', 'config.json'), JSON.stringify({ host: localHost }), { mode: 0o600 });
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  return {
    write(scope, m) {
      const env = { from: m.fromKind === 'agent' ? `claude:${m.fromId}` : `external:${m.fromId}@pts/1`, project: 'p', cwd: `/${host}/p`, fromKind: m.fromKind, fromId: m.fromId, to: m.to, ...(m.re !== undefined ? { re: m.re } : {}), body: m.body };
      const id = newId();
      signer.sidecar(id, scope, env); // makes and publishes that machine's key for the node
      // What that machine's relay published, as this bus's relay records it.
      recordRemoteKeys({ keysDir: join(bus.home, '.config', 'attend', 'keys'), host, node: m.fromId, text: readFileSync(join(root, 'keys', `${m.fromId}.pub`), 'utf8'), now: Date.now(), local: () => false });
      writeSignal(bus.root, scope, id, env, signer);
      return id;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
