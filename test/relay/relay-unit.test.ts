// The relay's pure parts: subjects and their escaping, settings checks, hub permissions.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkSettings, sanitizeHost } from '../../tools/relay/config.js';
import { escapeToken, parseSubject, subjectFor, unescapeToken } from '../../tools/relay/subjects.js';
import { publishAllow } from '../../tools/relay/hub-config.js';
import { parseSince } from '../../tools/relay/main.js';
import { replicasFor } from '../../tools/relay/hub.js';

describe('subjects', () => {
  it('builds the three shapes of spec §8 and reads them back', () => {
    expect(subjectFor({ origin: 'laptop', target: { kind: 'bcast' } })).toBe('attend.v1.laptop.bcast');
    expect(subjectFor({ origin: 'laptop', target: { kind: 'chan', name: 'ops.team' } })).toBe('attend.v1.laptop.chan.ops~2eteam');
    expect(subjectFor({ origin: 'laptop', target: { kind: 'tray', host: 'box', key: '-srv-app-bte5w6' } })).toBe('attend.v1.laptop.tray.box.-srv-app-bte5w6');
    expect(parseSubject('attend.v1.laptop.chan.ops~2eteam')).toEqual({ origin: 'laptop', target: { kind: 'chan', name: 'ops.team' } });
    for (const bad of ['attend.v1.laptop', 'attend.v2.x.bcast', 'attend.v1.x.bcast.extra', 'attend.v1.x.chan', 'attend.v1.x.tray.box', 'attend.v1.x.chan.a~zz']) expect(parseSubject(bad), bad).toBeNull();
  });

  it('escaping is reversible and never yields a separator or wildcard', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (s) => {
        const t = escapeToken(s);
        expect(t).toMatch(/^[A-Za-z0-9_~-]+$/);
        // A lone surrogate has no UTF-8 form; everything else comes back as it was.
        if (!/[\uD800-\uDFFF]/.test(s) || encodeURIComponentSafe(s)) expect(unescapeToken(t)).toBe(s);
      }),
    );
  });
});

describe('settings', () => {
  it('sanitises a hostname into [a-z0-9-]{1,32}', () => {
    expect(sanitizeHost('Build-Box.example.com')).toBe('build-box');
    expect(sanitizeHost('my_laptop (2)')).toBe('my-laptop-2');
    expect(sanitizeHost('___')).toBe('host');
    expect(sanitizeHost('x'.repeat(50))).toHaveLength(32);
  });

  it('refuses a hub off this machine without TLS or without credentials', () => {
    expect(checkSettings({ server: 'nats://127.0.0.1:4222', host: 'a' }).loopback).toBe(true);
    expect(() => checkSettings({ server: 'nats://hub.lan:4222', host: 'a', creds: 'c' })).toThrow(/without TLS/);
    expect(() => checkSettings({ server: 'tls://hub.lan:4222', host: 'a' })).toThrow(/without credentials/);
    expect(checkSettings({ server: 'nats://hub.lan:4222', host: 'a', creds: 'c', insecure: true }).tls).toBe(false);
    expect(checkSettings({ server: 'nats://hub.lan:4222', host: 'a', creds: 'c', tlsCa: 'ca.pem' }).tls).toBe(true);
    expect(() => checkSettings({ server: 'nats://127.0.0.1:4222', host: 'Bad.Host' })).toThrow(/\[a-z0-9-\]/);
    expect(() => checkSettings({ host: 'a' })).toThrow(/no hub/);
    expect(() => checkSettings({ server: 'http://x', host: 'a' })).toThrow(/nats:\/\//);
  });

  it('reads --since as a duration, an epoch or a date', () => {
    expect(parseSince('2h', 10_000_000)).toBe(10_000_000 - 7_200_000);
    expect(parseSince('1700000000000', 0)).toBe(1700000000000);
    expect(parseSince('2026-11-30T10:00:00Z', 0)).toBe(Date.parse('2026-11-30T10:00:00Z'));
    expect(() => parseSince('yesterday-ish', 0)).toThrow(/not a time/);
  });
});

describe('hub permissions', () => {
  it('a host may publish only under its own origin, its own presence key and its own shared state', () => {
    const allow = publishAllow('laptop');
    expect(allow).toContain('attend.v1.laptop.>');
    expect(allow.filter((s) => s.startsWith('attend.'))).toEqual(['attend.v1.laptop.>']);
    expect(allow.filter((s) => s.startsWith('$KV.'))).toEqual(['$KV.attend-presence.laptop', '$KV.attend-state.laptop.>']);
    // No stream deletion, purge or update; consumers only its own.
    expect(allow.some((s) => /DELETE\.ATTEND|PURGE|UPDATE/.test(s))).toBe(false);
    expect(allow.filter((s) => s.includes('CONSUMER') && s.includes('ATTEND.')).every((s) => s.includes('attend-laptop-'))).toBe(true);
  });
});

function encodeURIComponentSafe(s: string): boolean {
  try {
    encodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
}

describe('replicasFor', () => {
  it('one copy on a lone server; on a cluster the largest odd count up to five its servers hold', () => {
    const urls = (n: number) => Array.from({ length: n }, (_, i) => `127.0.0.1:${4222 + i}`);
    expect(replicasFor(undefined)).toBe(1);
    expect(replicasFor({ connect_urls: urls(3) })).toBe(1);
    for (const [n, r] of [[1, 1], [2, 1], [3, 3], [4, 3], [5, 5], [7, 5]] as const) expect(replicasFor({ cluster: 'c', connect_urls: urls(n) })).toBe(r);
    // The same server twice counts once; a cluster still forming counts the servers given.
    expect(replicasFor({ cluster: 'c', connect_urls: [...urls(1), ...urls(1)] })).toBe(1);
    expect(replicasFor({ cluster: 'c', connect_urls: urls(1) }, 3)).toBe(3);
  });
});
