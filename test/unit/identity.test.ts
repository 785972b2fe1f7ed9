import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type IdentityReaders, type ProcInfo, type SessionRecord, MAX_HOPS, normalizeOrigin, resolveIdentity } from '../../tools/identity/resolve.js';
import { parseProcStat, parseSessionRecord, procInfoFromProc, procInfoFromPs } from '../../tools/identity/system.js';
import { BIN, type TempBus, fakeSession, makeTempBus, procStart, runBin } from '../helpers/bus.js';

const SID = '11111111-2222-4333-8444-555555555555';
const SID_NEW = '99999999-2222-4333-8444-555555555555';

interface World {
  env?: Record<string, string>;
  self?: number;
  procs?: Record<number, ProcInfo>;
  records?: Record<number, SessionRecord>;
  terminal?: string | null;
  username?: string;
  cwd?: string;
}

function readers(w: World): IdentityReaders & { recordReads: number[] } {
  const recordReads: number[] = [];
  return {
    recordReads,
    env: w.env ?? {},
    selfPid: w.self ?? 500,
    cwd: w.cwd ?? '/home/aaron/here',
    readSessionRecord: (pid) => {
      recordReads.push(pid);
      return w.records?.[pid] ?? null;
    },
    procInfo: (pid) => w.procs?.[pid] ?? null,
    terminal: () => w.terminal ?? null,
    username: () => w.username ?? 'osuser',
  };
}

/** self 500 → 400 → 300 → 1, each with start time `s<pid>`. */
const chain: Record<number, ProcInfo> = { 500: { ppid: 400, start: 's500' }, 400: { ppid: 300, start: 's400' }, 300: { ppid: 1, start: 's300' }, 1: { ppid: 0, start: 's1' } };
const rec = (pid: number, extra: Partial<SessionRecord> = {}): SessionRecord => ({ pid, sessionId: SID, cwd: '/srv/api', procStart: `s${pid}`, ...extra });

describe('identity: the env fast path', () => {
  it('CLAUDE_PID with a matching record and start time resolves as that session', () => {
    const r = readers({ env: { CLAUDE_PID: '300', CLAUDE_CODE_SESSION_ID: SID, USER: 'aaron' }, procs: chain, records: { 300: rec(300, { name: 'api' }) } });
    const id = resolveIdentity(r);
    expect(id).toMatchObject({ resolved: true, kind: 'agent', id: SID, from: `claude:${SID}`, origin: '/srv/api', via: 'env', pid: 300, sessionId: SID, user: 'aaron' });
    expect(id.followedClear).toBeUndefined();
    // The fast path does not climb.
    expect(r.recordReads).toEqual([300]);
  });

  it('a record whose start time does not match (recycled pid) is not that session', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300', CLAUDE_CODE_SESSION_ID: SID, USER: 'aaron' }, procs: chain, records: { 300: rec(300, { procStart: 'other' }) } }));
    expect(id).toMatchObject({ resolved: false, kind: 'human', id: 'aaron' });
    expect(id.reason).toContain('pid recycled');
  });

  it('a record naming another pid than its file is not that session', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300' }, procs: chain, records: { 300: { ...rec(300), pid: 301 } } }));
    expect(id.resolved).toBe(false);
  });

  it('a dead CLAUDE_PID falls back to the climb', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '777', CLAUDE_CODE_SESSION_ID: SID }, procs: chain, records: { 777: rec(777), 400: rec(400) } }));
    expect(id).toMatchObject({ resolved: true, via: 'ancestry', pid: 400 });
  });

  it('garbage in CLAUDE_PID is ignored', () => {
    for (const bad of ['abc', '-3', '0', '1.5', '']) {
      const id = resolveIdentity(readers({ env: { CLAUDE_PID: bad }, procs: chain, records: { 300: rec(300) } }));
      expect(id).toMatchObject({ resolved: true, via: 'ancestry', pid: 300 });
    }
  });

  it('/clear: the env names the old session, the record the new one: follows the record', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300', CLAUDE_CODE_SESSION_ID: SID }, procs: chain, records: { 300: rec(300, { sessionId: SID_NEW }) } }));
    expect(id).toMatchObject({ resolved: true, id: SID_NEW, from: `claude:${SID_NEW}`, followedClear: true });
  });

  it('without a start time on either side the pid alone matches (no /proc)', () => {
    const procs = { ...chain, 300: { ppid: 1, start: '' } };
    expect(resolveIdentity(readers({ env: { CLAUDE_PID: '300' }, procs, records: { 300: rec(300) } })).resolved).toBe(true);
    const { procStart: _p, ...noStart } = rec(300);
    expect(resolveIdentity(readers({ env: { CLAUDE_PID: '300' }, procs: chain, records: { 300: noStart } })).resolved).toBe(true);
  });
});

describe('identity: the ancestry climb', () => {
  it('finds the nearest ancestor with a live record and never checks itself', () => {
    const r = readers({ procs: chain, records: { 500: rec(500), 400: rec(400, { sessionId: SID_NEW }), 300: rec(300) } });
    expect(resolveIdentity(r)).toMatchObject({ resolved: true, via: 'ancestry', pid: 400, id: SID_NEW });
    expect(r.recordReads).toEqual([400]);
  });

  it('skips an ancestor whose record is stale and keeps climbing', () => {
    expect(resolveIdentity(readers({ procs: chain, records: { 400: rec(400, { procStart: 'old' }), 300: rec(300) } }))).toMatchObject({ resolved: true, pid: 300 });
  });

  it(`climbs at most ${MAX_HOPS} hops`, () => {
    const procs: Record<number, ProcInfo> = {};
    for (let p = 1000; p < 1030; p++) procs[p] = { ppid: p + 1, start: `s${p}` };
    const at = (hops: number) => resolveIdentity(readers({ self: 1000, procs, records: { [1000 + hops]: rec(1000 + hops) } }));
    expect(at(MAX_HOPS)).toMatchObject({ resolved: true, pid: 1000 + MAX_HOPS });
    expect(at(MAX_HOPS + 1).resolved).toBe(false);
  });

  it('stops at init, after checking it', () => {
    const r = readers({ procs: chain, records: { 1: rec(1) } });
    expect(resolveIdentity(r)).toMatchObject({ resolved: true, pid: 1 });
    const r2 = readers({ procs: chain });
    expect(resolveIdentity(r2).resolved).toBe(false);
    expect(r2.recordReads).toEqual([400, 300, 1]);
  });

  it('stops where the process table ends', () => {
    const r = readers({ procs: { 500: { ppid: 400, start: 's' } } });
    expect(resolveIdentity(r)).toMatchObject({ resolved: false, reason: 'no Claude Code session in the process ancestry' });
  });
});

describe('identity: origin and the human fallback', () => {
  it.each([
    ['/home/dev/work/.claude/worktrees/feat-x', '/home/dev/work'],
    ['/home/dev/work/.claude/worktrees/feat-x/sub', '/home/dev/work'],
    ['/home/dev/work/', '/home/dev/work'],
    ['/home/dev/.claude', '/home/dev/.claude'],
    ['/', '/'],
    ['', '/'],
  ])('normalizeOrigin(%j) = %j', (cwd, origin) => {
    expect(normalizeOrigin(cwd)).toBe(origin);
  });

  it('a session in a worktree has the project as its origin', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300' }, procs: chain, records: { 300: rec(300, { cwd: '/srv/api/.claude/worktrees/fix' }) } }));
    expect(id.origin).toBe('/srv/api');
  });

  it('a record without cwd is still a session (origin falls back to the cwd)', () => {
    const { cwd: _c, ...noCwd } = rec(300);
    expect(resolveIdentity(readers({ env: { CLAUDE_PID: '300' }, procs: chain, records: { 300: noCwd }, cwd: '/x/y' }))).toMatchObject({ resolved: true, kind: 'agent', origin: '/x/y' });
  });

  it('human: external:<user>@<terminal>, id = sanitized $USER', () => {
    const id = resolveIdentity(readers({ env: { USER: 'Ann Lee' }, procs: chain, terminal: 'pts-3', cwd: '/home/ann/p/' }));
    expect(id).toMatchObject({ resolved: false, kind: 'human', id: 'Ann_Lee', from: 'external:Ann_Lee@pts-3', terminal: 'pts-3', origin: '/home/ann/p' });
  });

  it('human without a terminal: external:<user>; $LOGNAME, then the OS user', () => {
    expect(resolveIdentity(readers({ env: { LOGNAME: 'bob' } })).from).toBe('external:bob');
    expect(resolveIdentity(readers({ env: {}, username: 'carol' })).id).toBe('carol');
    expect(resolveIdentity(readers({ env: { USER: '../../etc' } })).id).toBe('etc');
  });
});

describe('identity: a detached process that keeps a session env (issue 14 §6)', () => {
  const live = rec(300);
  const find = (w: World, recs: SessionRecord[]) => ({ ...readers(w), findSessionById: (sid: string) => recs.find((r) => r.sessionId === sid) ?? null });
  it('CLAUDE_CODE_SESSION_ID of a live session, no CLAUDE_PID, no ancestry: that session, never the human', () => {
    const detached = { 500: { ppid: 1, start: 's500' }, 1: { ppid: 0, start: 's1' }, 300: { ppid: 1, start: 's300' } };
    const id = resolveIdentity(find({ env: { CLAUDE_CODE_SESSION_ID: SID, USER: 'ceo' }, procs: detached }, [live]));
    expect(id).toMatchObject({ kind: 'agent', id: SID, via: 'env' });
    expect(id.reason).toMatch(/detached/);
  });
  it('a session id whose record is dead or recycled is not that session: the human', () => {
    const detached = { 500: { ppid: 1, start: 's500' }, 1: { ppid: 0, start: 's1' }, 300: { ppid: 1, start: 'recycled' } };
    expect(resolveIdentity(find({ env: { CLAUDE_CODE_SESSION_ID: SID }, procs: detached }, [live])).kind).toBe('human');
    expect(resolveIdentity(find({ env: { CLAUDE_CODE_SESSION_ID: SID }, procs: detached }, [])).kind).toBe('human');
  });
});

describe('identity: system readers', () => {
  it('parseProcStat handles a comm with spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    expect(parseProcStat(`1234 (a) b (c)) ${fields.join(' ')}`)).toEqual({ ppid: 4, start: '22', state: '3' });
    expect(parseProcStat('garbage')).toBeNull();
  });

  it('procInfoFromProc reads this process; procInfoFromPs agrees on the parent', () => {
    const me = procInfoFromProc(process.pid);
    expect(me?.ppid).toBe(process.ppid);
    expect(me?.start).toMatch(/^\d+$/);
    expect(procInfoFromPs(process.pid)).toEqual({ ppid: process.ppid, start: '' });
    expect(procInfoFromProc(2 ** 30)).toBeNull();
    expect(procInfoFromPs(-1)).toBeNull();
  });

  it('parseSessionRecord keeps known fields and refuses malformed records', () => {
    expect(parseSessionRecord(JSON.stringify({ pid: 5, sessionId: SID, procStart: 123, name: 'api', extra: 1 }))).toEqual({ pid: 5, sessionId: SID, procStart: '123', name: 'api' });
    for (const bad of ['', '{', 'null', '[]', '{"pid":"5","sessionId":"x"}', '{"pid":5,"sessionId":""}', '{"pid":5,"sessionId":"a/b"}', '{"pid":5,"sessionId":"a|b"}']) {
      expect(parseSessionRecord(bad), bad).toBeNull();
    }
  });
});

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

  it('a real process with only CLAUDE_CODE_SESSION_ID (no CLAUDE_PID, not a descendant) resolves as that live session', () => {
    const s = fakeSession(bus, { name: 'api' });
    try {
      const { CLAUDE_PID: _pid, ...env } = s.env;
      const r = runBin(['whoami', '--json'], { env: { ...env, USER: 'ceo' } });
      expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'agent', id: s.sessionId, via: 'env' });
      const sent = runBin(['send', 'hello', '--json'], { env: { ...env, USER: 'ceo' } });
      expect(sent.exitCode, sent.stderr).toBe(0);
    } finally {
      s.kill();
    }
    // Once the session is gone, the same env is just a stale variable: the human.
    const { CLAUDE_PID: _pid2, ...env2 } = s.env;
    expect(JSON.parse(runBin(['whoami', '--json'], { env: env2 }).stdout)).toMatchObject({ kind: 'human' });
  });

  it('the human path in a real process: no session, sanitized $USER', () => {
    const r = runBin(['whoami', '--json'], { env: { ...bus.env, USER: 'Zoë Q' } });
    expect(JSON.parse(r.stdout)).toMatchObject({ resolved: false, kind: 'human', id: 'Zo__Q', busRoot: bus.root });
    expect(procStart(process.pid)).toMatch(/^\d+$/);
  });
});
