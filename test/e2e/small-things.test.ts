// Issue #10, "small things a user notices", at the bus and wire level: plurals, one label per
// sender, combining marks, channel names, the --on-behalf-of cap, a relative ATTEND_HOME.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { itemLines } from '../../tools/chat/state/lines.js';
import type { ChatMessage } from '../../tools/chat/state/feed.js';
import { MAX_ON_BEHALF_OF, envelopeProblems, formatSignal } from '../../tools/wire/envelope.js';
import { parseChannelName } from '../../tools/wire/names.js';
import { MAX_MARKS, messageHeader, neutralize, plural } from '../../tools/wire/render.js';
import { type TempBus, runBin, runInProcess, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => {
  bus = b;
});

describe('plurals', () => {
  it('never "1 messages"', () => {
    expect(plural(1, 'message')).toBe('1 message');
    expect(plural(0, 'message')).toBe('0 messages');
    expect(plural(2, 'directory', 'directories')).toBe('2 directories');
    expect(plural(12345, 'item')).toBe('12,345 items');
  });

  it('status and dissolve say "1 message" and "1 member" (the built CLI)', async () => {
    const s = session({ name: 'api' });
    expect(runBin(['send', 'only one'], { env: bus.env, cwd: bus.home }).exitCode).toBe(0);
    const status = await runInProcess(['status'], { env: bus.env });
    expect(status.stdout).toMatch(/inbox: +1 message, /);
    expect(status.stdout).not.toMatch(/\b1 messages\b/);
    expect(runBin(['channels', 'create', 'ops'], { env: bus.env, cwd: bus.home }).exitCode).toBe(0);
    expect(runBin(['join', 'ops'], { env: s.env, cwd: s.cwd }).exitCode).toBe(0);
    expect(runBin(['send', '--channel', 'ops', 'one in ops'], { env: s.env, cwd: s.cwd }).exitCode).toBe(0);
    const d = runBin(['dissolve', 'ops', '--force'], { env: bus.env, cwd: bus.home });
    expect(d.exitCode, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/\(1 message removed, 1 member told\)/);
  });
});

describe('one label per sender in the chat', () => {
  const msg = (fromId: string): ChatMessage => ({
    id: 'm1',
    scope: { kind: 'open' },
    scopes: [{ kind: 'open' }],
    time: Date.UTC(2026, 0, 1, 12),
    path: '/x',
    from: `external:${fromId}@pts-1`,
    project: 'p',
    cwd: '/p',
    fromKind: 'human',
    fromId,
    to: '*',
    body: 'hi',
    legacy: false,
  });
  const lc = { width: 100, me: 'root', name: (id: string) => id, colorOf: () => undefined, parentSender: () => undefined, tab: 'merged' };
  const header = (fromId: string) => itemLines({ kind: 'msg', msg: msg(fromId) }, lc)[0]!.map((s) => s.text).join('');

  it('"root (you)", never "root (you) (human)"; another human stays "(human)"', () => {
    expect(header('root')).toContain('root (you)');
    expect(header('root')).not.toContain('(human)');
    expect(header('aaron')).toContain('aaron (human)');
  });
});

describe('combining marks', () => {
  const marks = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(0x0300 + (i % 0x6f))).join('');
  const longestRun = (s: string) => Math.max(0, ...[...s.matchAll(/\p{M}+/gu)].map((m) => Array.from(m[0]).length));

  it('at most MAX_MARKS per base character reach the terminal', () => {
    expect(neutralize(`Z${marks(200)}a${marks(50)}`)).toBe(`Z${marks(MAX_MARKS)}a${marks(MAX_MARKS)}`);
  });

  it('real text keeps its marks: decomposed accents, Vietnamese, pointed Hebrew, emoji', () => {
    for (const t of ['e\u0301te\u0301', 'Vi\u1EC7t', 'vie\u0323\u0302t', '\u05E9\u05C1\u05B8\u0591\u05B4', '1\uFE0F\u20E3', '🏳\uFE0F\u200D🌈', 'नमस्ते']) expect(neutralize(t)).toBe(t);
  });

  it('property: no run of marks longer than MAX_MARKS, and text within the cap is untouched by it', () => {
    const mark = fc.integer({ min: 0x0300, max: 0x036f }).map((c) => String.fromCharCode(c));
    const zalgo = fc.array(fc.tuple(fc.constantFrom('a', 'Z', 'é', 'ж', '字'), fc.array(mark, { maxLength: 40 })), { maxLength: 20 }).map((xs) => xs.map(([b, ms]) => b + ms.join('')).join(''));
    fc.assert(
      fc.property(fc.oneof(zalgo, fc.string({ unit: 'binary' })), (s) => {
        const out = neutralize(s, { multiline: true });
        expect(longestRun(out)).toBeLessThanOrEqual(MAX_MARKS);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'o', 'ж'), fc.array(mark, { maxLength: MAX_MARKS })), { maxLength: 20 }), (xs) => {
        const s = xs.map(([b, ms]) => b + ms.join('')).join('');
        expect(neutralize(s)).toBe(s);
      }),
      { numRuns: 500 },
    );
  });
});

describe('channel names', () => {
  it('are case-insensitive, stored lowercase', () => {
    expect(parseChannelName('Ops')).toEqual({ ok: true, name: 'ops' });
    expect(parseChannelName('#OPS')).toEqual({ ok: true, name: 'ops' });
    expect(parseChannelName('Open')).toMatchObject({ ok: false, reason: expect.stringContaining('reserved') });
  });

  it('refuse .x, -x, _x and a..b', () => {
    for (const bad of ['.x', '-x', '_x', 'a..b', '..', '.']) expect(parseChannelName(bad), bad).toMatchObject({ ok: false });
    expect(parseChannelName('a..b')).toMatchObject({ reason: "channel name 'a..b' may not contain '..'" });
    expect(parseChannelName('-x')).toMatchObject({ reason: "channel name '-x' must begin with a letter or a digit" });
    for (const good of ['a.b', 'a-b', 'a_b', '9lives', 'x.']) expect(parseChannelName(good), good).toMatchObject({ ok: true });
  });

  it('Ops and ops are one channel on the bus (the built CLI)', () => {
    const r = runBin(['channels', 'create', 'Ops'], { env: bus.env, cwd: bus.home });
    expect(r.exitCode, r.stderr).toBe(0);
    const again = runBin(['channels', 'create', 'ops'], { env: bus.env, cwd: bus.home });
    expect(again.exitCode).not.toBe(0);
    expect(runBin(['join', 'OPS'], { env: bus.env, cwd: bus.home }).exitCode).toBe(0);
    expect(runBin(['send', '--channel', '#oPs', 'mixed case'], { env: bus.env, cwd: bus.home }).exitCode).toBe(0);
    expect(readdirSync(join(bus.root, 'signals')).filter((d) => d.startsWith('@'))).toEqual(['@ops']);
  });
});

describe('--on-behalf-of', () => {
  const env = { from: 'external:a@x', project: 'p', cwd: '/p', fromKind: 'human' as const, fromId: 'a', to: '*', body: 'hi' };

  it('is capped in the wire', () => {
    expect(envelopeProblems({ ...env, onBehalfOf: 'x'.repeat(MAX_ON_BEHALF_OF) })).toEqual([]);
    expect(envelopeProblems({ ...env, onBehalfOf: 'x'.repeat(MAX_ON_BEHALF_OF + 1) })).toEqual([`on_behalf_of is at most ${MAX_ON_BEHALF_OF} characters (this one has ${MAX_ON_BEHALF_OF + 1})`]);
    expect(() => formatSignal({ ...env, onBehalfOf: 'x'.repeat(5000) })).toThrow(/at most 128/);
    // A file written without attend is cut when shown.
    const h = messageHeader({ ...env, onBehalfOf: 'y'.repeat(5000), legacy: false }, 'id1');
    expect(h.length).toBeLessThan(300);
  });

  it('the CLI refuses a longer claim with exit 2 and writes nothing', () => {
    const r = runBin(['send', '--on-behalf-of', 'z'.repeat(MAX_ON_BEHALF_OF + 1), 'hi'], { env: bus.env, cwd: bus.home });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^attend: on_behalf_of is at most 128 characters/);
    expect(existsSync(join(bus.root, 'signals', '_broadcast'))).toBe(false);
  });
});

describe('a relative ATTEND_HOME', () => {
  it('is refused with exit 3 by every command that touches the bus, creating nothing', () => {
    for (const args of [['send', 'hi'], ['inbox'], ['peers'], ['whoami']]) {
      const r = runBin(args, { env: { ...bus.env, ATTEND_HOME: 'rel/bus' }, cwd: bus.home });
      expect(r.exitCode, args.join(' ')).toBe(3);
      expect(r.stderr).toBe(`attend: ATTEND_HOME must be an absolute path, not 'rel/bus'; a relative one names a different bus in every directory; e.g. ATTEND_HOME="$HOME/.cache/attend"\n`);
    }
    expect(existsSync(join(bus.home, 'rel'))).toBe(false);
  });
});
