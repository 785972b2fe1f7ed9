// Identity resolution in real process trees: a spawned attend resolves as the session that
// owns an ancestor (the resolver's unit tests are in test/identity/resolve.test.ts).

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type TempBus, fakeSession, makeTempBus, procStart, runBin } from '../helpers/bus.js';

const SID = '11111111-2222-4333-8444-555555555555';
const SID_NEW = '99999999-2222-4333-8444-555555555555';

describe('identity end to end, with a real process tree', () => {
  let bus: TempBus;
  beforeEach(() => {
    bus = makeTempBus();
  });
  afterEach(() => bus.cleanup());

  /**
   * A parent node process writes <CLAUDE_CONFIG_DIR>/sessions/<its pid>.json, then runs
   * `sh -c 'node attend whoami --json; exit $?'` (the trailing command keeps sh from
   * exec-ing node, so there really is a shell in between), with no CLAUDE_* variables.
   */
  function whoamiUnder(procStartOf: 'real' | 'wrong') {
    const cwd = join(bus.dir, 'work', 'svc', '.claude', 'worktrees', 'wt1');
    mkdirSync(cwd, { recursive: true });
    const parent = `
      const { readFileSync, writeFileSync } = require('node:fs');
      const { spawnSync } = require('node:child_process');
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const real = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      const rec = { pid: process.pid, sessionId: ${JSON.stringify(SID)}, cwd: ${JSON.stringify(cwd)}, procStart: ${procStartOf === 'real' ? 'real' : "'1'"}, name: 'svc', status: 'busy' };
      writeFileSync(process.env.CLAUDE_CONFIG_DIR + '/sessions/' + process.pid + '.json', JSON.stringify(rec));
      const r = spawnSync('sh', ['-c', 'node "$ATTEND_BIN" whoami --json; exit $?'], { encoding: 'utf8', cwd: ${JSON.stringify(cwd)} });
      process.stdout.write(JSON.stringify({ pid: process.pid, status: r.status, out: r.stdout, err: r.stderr }));
    `;
    const env = { ...bus.env, ATTEND_BIN: BIN, PATH: `${process.execPath.replace(/\/node$/, '')}:${bus.env.PATH}` };
    expect(Object.keys(env).filter((k) => k.startsWith('CLAUDE_') && k !== 'CLAUDE_CONFIG_DIR')).toEqual([]);
    const r = spawnSync(process.execPath, ['-e', parent], { env, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const res = JSON.parse(r.stdout) as { pid: number; status: number; out: string; err: string };
    expect(res.status, res.err).toBe(0);
    return { pid: res.pid, who: JSON.parse(res.out) as Record<string, unknown> };
  }

  it('resolves as the session that owns an ancestor', () => {
    const { pid, who } = whoamiUnder('real');
    expect(who).toMatchObject({
      resolved: true,
      kind: 'agent',
      id: SID,
      sessionId: SID,
      from: `claude:${SID}`,
      via: 'ancestry',
      pid,
      origin: join(bus.dir, 'work', 'svc'),
      displayName: 'svc',
      status: 'busy',
    });
  });

  it('a record whose start time does not match does not resolve', () => {
    const { who } = whoamiUnder('wrong');
    expect(who).toMatchObject({ resolved: false, kind: 'human', id: 'tester', from: 'external:tester' });
  });

  it('whoami follows a /clear: stale CLAUDE_CODE_SESSION_ID, fresh record', () => {
    const s = fakeSession(bus, { name: 'api' });
    try {
      const r = runBin(['whoami', '--json'], { env: { ...s.env, CLAUDE_CODE_SESSION_ID: SID_NEW } });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: s.sessionId, followedClear: true, via: 'env', displayName: 'api' });
      const text = runBin(['whoami'], { env: { ...s.env, CLAUDE_CODE_SESSION_ID: SID_NEW } }).stdout;
      expect(text).toContain('followed a /clear');
      expect(text).toContain(`id:       ${s.sessionId}`);
    } finally {
      s.kill();
    }
  });

  it('the human path in a real process: no session, sanitized $USER', () => {
    const r = runBin(['whoami', '--json'], { env: { ...bus.env, USER: 'Zoë Q' } });
    expect(JSON.parse(r.stdout)).toMatchObject({ resolved: false, kind: 'human', id: 'Zo__Q', busRoot: bus.root });
    expect(procStart(process.pid)).toMatch(/^\d+$/);
  });
});

describe('agent CLIs that are not Claude Code, in a real process tree (issue #10 §17)', () => {
  let bus: TempBus;
  beforeEach(() => {
    bus = makeTempBus();
  });
  afterEach(() => bus.cleanup());

  /** Run attend as a child of a process whose command line is Codex's (node .../@openai/codex/bin/codex.js). */
  function underCodex(args: string[]): { out: string; status: number } {
    const dir = join(bus.dir, 'node_modules', '@openai', 'codex', 'bin');
    mkdirSync(dir, { recursive: true });
    const script = join(dir, 'codex.js');
    writeFileSync(script, `const r = require('node:child_process').spawnSync(process.execPath, [${JSON.stringify(BIN)}, ...process.argv.slice(2)], { encoding: 'utf8' }); process.stdout.write(r.stdout); process.exit(r.status ?? 1);`);
    const r = spawnSync(process.execPath, [script, ...args], { env: bus.env, encoding: 'utf8', cwd: bus.home });
    return { out: r.stdout, status: r.status ?? -1 };
  }

  it('each running instance is an agent with its own id and ledger, so two drains do not take each other’s messages', () => {
    const who = JSON.parse(underCodex(['whoami', '--json']).out) as { kind: string; id: string };
    expect(who.kind).toBe('agent');
    expect(who.id).toMatch(/^codex-/);
    expect(runBin(['send', 'for every agent'], { env: bus.env }).exitCode).toBe(0);
    const first = underCodex(['inbox', '--drain', '--format', 'plain']);
    const second = underCodex(['inbox', '--drain', '--format', 'plain']);
    // Each instance is delivered the broadcast (a non-party thread collapses to one line).
    expect(first.out).toMatch(/^\[attend\] 1 peer message delivered/);
    expect(second.out).toMatch(/^\[attend\] 1 peer message delivered/);
    expect(second.out).toContain('tester');
    // The human at the terminal is still the human, with a ledger of its own.
    expect(JSON.parse(runBin(['whoami', '--json'], { env: bus.env }).stdout)).toMatchObject({ kind: 'human', id: 'tester' });
  });
});
