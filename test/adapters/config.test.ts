// Issue 24 §3: the adapters' configuration (one zod schema, a 0600 file, a bad outlet refused
// with nothing written) and the signature helpers both directions rely on.

import { createHmac } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { useKeyDirectory } from '../../tools/bus/trust/anchors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addOutlet, configFile, readConfig, redacted, removeOutlet } from '../../tools/adapters/config.js';
import { backoff, forPerson } from '../../tools/adapters/run.js';
import { freshTimestamp, sameSecret, slackSignature, webhookSignature } from '../../tools/adapters/outlets.js';
import { AttendError } from '../../tools/wire/errors.js';
import type { Message } from '../../tools/bus/store/index.js';
import { type TempBus, makeTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
beforeEach(() => {
  bus = makeTempBus();
  mkdirSync(bus.root, { recursive: true, mode: 0o700 });
  useKeyDirectory(bus.root, join(bus.home, '.config', 'attend', 'keys'));
});
afterEach(() => bus.cleanup());

describe('adapter config', () => {
  it('adds, lists without secrets, removes; the file is 0600', () => {
    addOutlet(bus.root, { kind: 'webhook', name: 'phone', url: 'https://example.net/h', secret: 's'.repeat(24) }, 1000);
    expect(statSync(configFile(bus.root)).mode & 0o777).toBe(0o600);
    const cfg = readConfig(bus.root);
    expect(cfg.outlets.map((o) => o.name)).toEqual(['phone']);
    expect(JSON.stringify(cfg.outlets.map(redacted))).not.toContain('ssss');
    removeOutlet(bus.root, 'phone');
    expect(readConfig(bus.root).outlets).toEqual([]);
  });

  it('lives in the key directory, never the bus root, and is refused (exit 5) when that directory is open to others', () => {
    addOutlet(bus.root, { kind: 'webhook', name: 'phone', url: 'https://example.net/h', secret: 's'.repeat(24) }, 1000);
    const keys = join(bus.home, '.config', 'attend', 'keys');
    expect(configFile(bus.root).startsWith(`${keys}/buses/`)).toBe(true);
    expect(() => statSync(join(bus.root, 'adapters'))).toThrow();
    // A second bus of the same user has a directory of its own.
    const other = join(bus.dir, 'bus2');
    useKeyDirectory(other, keys);
    expect(dirname(dirname(configFile(other)))).not.toBe(dirname(dirname(configFile(bus.root))));
    expect(readConfig(other).outlets).toEqual([]);
    chmodSync(keys, 0o755);
    let err: unknown;
    try {
      readConfig(bus.root);
    } catch (e) {
      err = e;
    }
    expect((err as AttendError).exitCode).toBe(5);
    expect((err as Error).message).toMatch(/open to group or others/);
  });

  it('refuses a bad outlet (exit 2) and writes nothing', () => {
    const bad = [
      { kind: 'webhook', name: 'x', url: 'file:///etc/passwd', secret: 's'.repeat(24) },
      { kind: 'webhook', name: 'x', url: 'https://e.net', secret: 'short' },
      { kind: 'webhook', name: 'Bad Name', url: 'https://e.net', secret: 's'.repeat(24) },
      { kind: 'telegram', name: 't', token: 'nope', chatId: '1', secretToken: 't'.repeat(20) },
      { kind: 'carrier-pigeon', name: 'p' },
    ];
    for (const b of bad) {
      let err: unknown;
      try {
        addOutlet(bus.root, b, 1000);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(b)).toBeInstanceOf(AttendError);
      expect((err as AttendError).exitCode).toBe(2);
    }
    expect(() => statSync(configFile(bus.root))).toThrow();
  });

  it('a config file edited into something invalid is a one-line bus error, not a crash', () => {
    mkdirSync(dirname(configFile(bus.root)), { recursive: true, mode: 0o700 });
    writeFileSync(configFile(bus.root), JSON.stringify({ version: 1, outlets: [{ kind: 'webhook', name: 'a' }] }));
    expect(() => readConfig(bus.root)).toThrow(/outlets\.0/);
    expect(readFileSync(configFile(bus.root), 'utf8')).toContain('"a"');
  });
});

describe('signatures and selection', () => {
  it('webhook and Slack signatures are HMAC-SHA256 over the documented strings', () => {
    expect(webhookSignature('k', '10', 'b')).toBe(`v1=${createHmac('sha256', 'k').update('10.b').digest('hex')}`);
    expect(slackSignature('k', '10', 'b')).toBe(`v0=${createHmac('sha256', 'k').update('v0:10:b').digest('hex')}`);
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'abcd')).toBe(false);
  });

  it('a timestamp older or newer than five minutes, or not a number, is refused', () => {
    const now = 1_700_000_000_000;
    expect(freshTimestamp('1700000000', now)).toBe(true);
    expect(freshTimestamp('1699999000', now)).toBe(false);
    expect(freshTimestamp('1700001000', now)).toBe(false);
    expect(freshTimestamp('1e9', now)).toBe(false);
    expect(freshTimestamp(undefined, now)).toBe(false);
  });

  it('backs off from 1 s, doubling, to a minute', () => {
    expect([1, 2, 3, 7, 20].map(backoff)).toEqual([1000, 2000, 4000, 60_000, 60_000]);
  });

  it('forwards mail naming the person, mentions and urgent posts; never their own, never chatter', () => {
    const m = (over: Partial<Message>) => ({ fromId: 'a1', to: '', scope: { kind: 'open' }, ...over }) as Message;
    expect(forPerson(m({ to: 'me', scope: { kind: 'tray', key: 'k' } }), 'me')).toBe('direct');
    expect(forPerson(m({ to: 'me' }), 'me')).toBe('mention');
    expect(forPerson(m({ urgency: 'urgent' }), 'me')).toBe('urgent');
    expect(forPerson(m({}), 'me')).toBeNull();
    expect(forPerson(m({ fromId: 'me', to: 'me', urgency: 'urgent' }), 'me')).toBeNull();
  });
});
