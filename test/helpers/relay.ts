// Machines for relay tests: each is its own bus root, HOME and Claude config dir, with a
// real `attend relay` process (from dist/) on a host name of its own.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import { BIN, type FakeSession, type TempBus, fakeSession, makeTempBus, useFamilyPolicy, waitFor } from './bus.js';
import { type NatsServer, startNats } from './nats.js';

export interface Machine {
  host: string;
  bus: TempBus;
  relay: ChildProcess | null;
  relayLog(): string;
  startRelay(extra?: string[]): Promise<void>;
  /** Start the relay process and return at once (startRelay waits for it to connect). */
  spawnRelay(extra?: string[]): ChildProcess;
  /** SIGTERM and wait for the exit. */
  stopRelay(): Promise<void>;
  killRelay(): Promise<void>;
  status(): Record<string, unknown> | null;
  /** Ids of the signal files in a directory under signals/. */
  ids(dir: string): string[];
}

function exited(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((r) => p.once('exit', () => r()));
}

/**
 * `family`: the machine's bus gets a family policy (test/helpers/temp-bus.ts useFamilyPolicy),
 * for tests of the transport: under the default, a session of another machine is in no local
 * group and reaches only the person here (docs/cross-machine.md).
 */
export function makeMachine(host: string, server: () => string, opts: { creds?: string; family?: boolean } = {}): Machine {
  const bus = makeTempBus();
  if (opts.family) useFamilyPolicy(bus);
  let log = '';
  const m: Machine = {
    host,
    bus,
    relay: null,
    relayLog: () => log,
    spawnRelay(extra = []) {
      const args = [BIN, 'relay', '--server', server(), '--host', host, '--presence-ttl', '4', ...(opts.creds ? ['--creds', opts.creds] : []), ...extra];
      const p = spawn(process.execPath, args, { env: bus.env, stdio: ['ignore', 'ignore', 'pipe'] });
      p.stderr!.on('data', (b: Buffer) => (log += b.toString('utf8')));
      m.relay = p;
      return p;
    },
    async startRelay(extra = []) {
      const started = Date.now();
      const p = m.spawnRelay(extra);
      await waitFor(() => {
        const s = m.status();
        return s !== null && s.pid === p.pid && s.connected === true && s.ready === true && (s.updatedAt as number) >= started - 1000 && /connected to/.test(log);
      }, { timeoutMs: 30_000, what: `relay ${host} connected` });
    },
    async stopRelay() {
      const p = m.relay;
      if (!p) return;
      p.kill('SIGTERM');
      await exited(p);
      m.relay = null;
    },
    async killRelay() {
      const p = m.relay;
      if (!p) return;
      p.kill('SIGKILL');
      await exited(p);
      m.relay = null;
    },
    status() {
      try {
        return JSON.parse(readFileSync(join(bus.root, 'relay', 'status.json'), 'utf8')) as Record<string, unknown>;
      } catch {
        return null;
      }
    },
    ids(dir) {
      try {
        return readdirSync(join(bus.root, 'signals', dir))
          .filter((n) => n.endsWith('.signal') && !n.startsWith('.'))
          .map((n) => n.slice(0, -'.signal'.length))
          .sort();
      } catch {
        return [];
      }
    },
  };
  return m;
}

/** What a test file of machines on one hub works with (useRelayWorld). */
export interface RelayWorld {
  /** The hub's URL (the nats-server this file started). */
  url(): string;
  /** A machine on the hub; its relay is stopped and its bus removed after the test. */
  machine(host: string, opts?: { family?: boolean }): Machine;
  /** A live Claude Code session on a machine, ended after the test. */
  session(m: Machine, name: string): FakeSession;
  /** Cleanup to run after the test, before the machines go (a sensor to stop). */
  defer(fn: () => Promise<void> | void): void;
}

/** One real nats-server for the file; machines and sessions made per test, removed after it. */
export function useRelayWorld(): RelayWorld {
  let nats: NatsServer | undefined;
  const machines: Machine[] = [];
  const sessions: FakeSession[] = [];
  const later: (() => Promise<void> | void)[] = [];
  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    await nats?.stop();
  });
  afterEach(async () => {
    for (const fn of later.splice(0)) await fn();
    for (const m of machines.splice(0)) {
      await m.stopRelay();
      m.bus.cleanup();
    }
    for (const s of sessions.splice(0)) s.kill();
  });
  const url = () => {
    if (!nats) throw new Error('the hub is not started yet (useRelayWorld runs in beforeAll)');
    return nats.url;
  };
  return {
    url,
    machine(host, opts = {}) {
      const m = makeMachine(host, url, opts);
      machines.push(m);
      return m;
    },
    session(m, name) {
      const s = fakeSession(m.bus, { name });
      sessions.push(s);
      return s;
    },
    defer(fn) {
      later.push(fn);
    },
  };
}

/** Write `n` broadcasts on machine `m`, yielding to the event loop every `every`; returns their ids. */
export async function burst(m: Machine, n: number, opts: { every?: number; onProgress?: (i: number) => Promise<void> | void } = {}): Promise<string[]> {
  const newId = createIdFactory({ now: Date.now, pid: process.pid * 7 + m.host.length, random: Math.random });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newId();
    writeSignal(m.bus.root, { kind: 'open' }, id, { from: `external:${m.host}-user@pts/1`, project: 'work', cwd: '/work', fromKind: 'human', fromId: `${m.host}-user`, to: '*', body: `${m.host} #${i}` });
    ids.push(id);
    if (i % (opts.every ?? 100) === 0) {
      await opts.onProgress?.(i);
      await new Promise((r) => setImmediate(r));
    }
  }
  return ids;
}

/** Every one of `ids` at `receiver`, once, and nothing else (the logs of `machines` when not). */
export async function expectAllAt(receiver: Machine, ids: string[], what: string, machines: Machine[]): Promise<void> {
  const want = [...ids].sort();
  try {
    await waitFor(() => receiver.ids('_broadcast').length >= want.length, { timeoutMs: 60_000, intervalMs: 100 });
  } catch {
    const have = new Set(receiver.ids('_broadcast'));
    const missing = want.filter((id) => !have.has(id));
    throw new Error(`${what}: ${missing.length} of ${want.length} missing at ${receiver.host} (first ${missing.slice(0, 3).join(', ')}); logs: ${machines.map((m) => `${m.host}: ${m.relayLog().slice(-600)}`).join(' | ')}`);
  }
  expect(receiver.ids('_broadcast')).toEqual(want);
}

