// Issue #10 item 2: bodies no reader would accept are refused at send (exit 2, every front
// end goes through checkBody), and a file on the bus that no reader can parse is moved once
// to the quarantine with the reason, reported once, then never again.

import { existsSync, lutimesSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QUARANTINE_AFTER_MS, countQuarantined, listQuarantined, quarantineDir } from '../../tools/bus/store/quarantine.js';
import { AttendError } from '../../tools/wire/errors.js';
import { MAX_BODY_BYTES, readSignalFile, writeSignals } from '../../tools/bus/store/messages.js';
import { bodyProblem } from '../../tools/wire/envelope.js';
import { type TempBus, runBin, runInProcess, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
useTempBus((b) => {
  bus = b;
});

const asHuman = (args: string[], input?: string) => runBin(args, { env: bus.env, cwd: bus.home, ...(input !== undefined ? { input } : {}) });
const openDir = () => join(bus.root, 'signals', '_broadcast');
const signalFiles = () => (existsSync(openDir()) ? readdirSync(openDir()).filter((n) => n.endsWith('.signal')) : []);

describe('bodyProblem (wire)', () => {
  it('names NUL bytes and lone surrogates, and nothing else', () => {
    expect(bodyProblem('a\0b')).toMatch(/NUL byte \(at character 2\)/);
    expect(bodyProblem('x\uD800')).toMatch(/lone surrogate at character 2/);
    expect(bodyProblem('\uDC00x')).toMatch(/lone surrogate at character 1/);
    for (const ok of ['hello', '😀 ok', 'line\nbreak', '\u001b[31m red', 'équipe', '|to:*|x']) expect(bodyProblem(ok)).toBeNull();
  });
});

describe('refused at send', () => {
  it('a NUL byte from stdin: exit 2, one line, nothing written (the built binary, fast path)', () => {
    const r = asHuman(['send', '-'], 'before\0after');
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^attend: the message contains a NUL byte \(at character 7\), which no reader accepts/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(signalFiles()).toEqual([]);
  });

  it('through the full CLI (reply) the same rule applies', async () => {
    const r = await runInProcess(['reply', '--json', 'x\0y'], { env: bus.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('NUL byte');
    expect(signalFiles()).toEqual([]);
  });
});

describe('a line no reader would take', () => {
  it('a body within its limit but a file over the readers\' limit is refused (exit 4) before anything is written', () => {
    const env = { from: 'external:tester@x', project: 'p', cwd: '/p', fromKind: 'human' as const, fromId: 'tester', to: Array.from({ length: 500 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(','), body: 'x'.repeat(MAX_BODY_BYTES) };
    let err: unknown;
    try {
      writeSignals(bus.root, [{ kind: 'open' }], '0aaaaaaaa000-big00001', env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AttendError);
    expect((err as AttendError).exitCode).toBe(4);
    expect((err as AttendError).message).toMatch(/readers take at most/);
    expect(signalFiles()).toEqual([]);
    // Just within: written, and read back whole.
    const fits = { ...env, to: '*', body: 'x'.repeat(MAX_BODY_BYTES) };
    writeSignals(bus.root, [{ kind: 'open' }], '0aaaaaaaa000-big00002', fits);
    expect(readSignalFile(join(openDir(), '0aaaaaaaa000-big00002.signal'))).toMatchObject({ ok: true });
  });
});

describe('the quarantine', () => {
  /** Put a file under signals/_broadcast with an mtime `ageMs` in the past. */
  function put(name: string, content: string | Buffer, ageMs = QUARANTINE_AFTER_MS + 60_000): string {
    mkdirSync(openDir(), { recursive: true, mode: 0o700 });
    const p = join(openDir(), name);
    writeFileSync(p, content, { mode: 0o600 });
    const t = (Date.now() - ageMs) / 1000;
    utimesSync(p, t, t);
    return p;
  }

  it('moves a settled bad file once with its reason; later runs say nothing; good messages stay', () => {
    const ok = asHuman(['send', 'a good one']);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const nul = put('0aaaaaaaa000-bad00001.signal', Buffer.from('external:x|p|/p|nul\0here'));
    const junk = put('0aaaaaaaa000-bad00002.signal', 'no bars at all');
    const empty = put('0aaaaaaaa000-bad00003.signal', '');
    mkdirSync(join(bus.dir, 'elsewhere'));
    const link = join(openDir(), '0aaaaaaaa000-bad00004.signal');
    symlinkSync(join(bus.dir, 'elsewhere', 'x'), link);
    const old = (Date.now() - QUARANTINE_AFTER_MS - 60_000) / 1000;
    lutimesSync(link, old, old);

    const first = asHuman(['inbox']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('a good one');
    const lines = first.stderr.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.includes('bad00001'))).toMatch(/binary content \(NUL byte\); moved to .*quarantine\/_broadcast\/0aaaaaaaa000-bad00001\.signal$/);
    expect(lines.find((l) => l.includes('bad00002'))).toMatch(/not a signal line .*; moved to /);
    expect(lines.find((l) => l.includes('bad00003'))).toMatch(/empty file; moved to /);
    expect(lines.find((l) => l.includes('bad00004'))).toMatch(/a symbolic link, not a signal file; moved to /);
    for (const p of [nul, junk, empty, link]) expect(existsSync(p)).toBe(false);

    // Moved, not deleted, and the bytes are what they were.
    const q = join(quarantineDir(bus.root), '_broadcast');
    expect(readFileSync(join(q, '0aaaaaaaa000-bad00001.signal'))).toEqual(Buffer.from('external:x|p|/p|nul\0here'));
    const note = JSON.parse(readFileSync(join(q, '0aaaaaaaa000-bad00001.signal.reason'), 'utf8')) as { reason: string; from: string };
    expect(note).toMatchObject({ reason: 'binary content (NUL byte)', from: nul });
    expect(countQuarantined(bus.root)).toBe(4);
    expect(listQuarantined(bus.root).map((e) => e.reason)).toContain('empty file');
    // attend status counts them.
    expect(JSON.parse(asHuman(['status', '--json']).stdout).quarantined).toBe(4);
    expect(asHuman(['status']).stdout).toMatch(/quarantine: 4 unreadable files set aside under /);

    // Reported once: the next runs (another process, the drain too) are quiet.
    const second = asHuman(['inbox']);
    expect(second.stderr).toBe('');
    expect(second.stdout).toContain('a good one');
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: bus.env, cwd: bus.home });
    expect(drain.stderr).toBe('');
  });

  it('a file that changed just now (maybe still being written in place) is skipped, not moved', () => {
    const fresh = put('0aaaaaaaa000-bad00005.signal', '', 0);
    const r = asHuman(['inbox']);
    expect(r.stderr).toMatch(/skipped .*bad00005\.signal: empty file\n$/);
    expect(existsSync(fresh)).toBe(true);
    expect(countQuarantined(bus.root)).toBe(0);
  });

  it('the same name going bad again does not overwrite the first', () => {
    put('0aaaaaaaa000-bad00006.signal', 'one');
    asHuman(['inbox']);
    put('0aaaaaaaa000-bad00006.signal', 'two');
    asHuman(['inbox']);
    const q = join(quarantineDir(bus.root), '_broadcast');
    expect(readFileSync(join(q, '0aaaaaaaa000-bad00006.signal'), 'utf8')).toBe('one');
    expect(readFileSync(join(q, '0aaaaaaaa000-bad00006.signal.1'), 'utf8')).toBe('two');
    expect(countQuarantined(bus.root)).toBe(2);
  });
});
