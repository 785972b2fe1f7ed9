import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { type IdentityReaders, type ProcInfo, type SessionRecord, MAX_HOPS, declaredAgentId, isDeclaredAgentId, normalizeOrigin, resolveIdentity, resolveStartedFor } from '../../tools/identity/resolve.js';
import { isGlobalId } from '../../tools/wire/hosts.js';
import { sanitizeMemberId } from '../../tools/wire/envelope.js';
import { findParent } from '../../tools/identity/lineage.js';
import { parseProcStat, parseSessionRecord, procInfoFromProc, procInfoFromPs } from '../../tools/identity/system.js';

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
  commands?: Record<number, string[]>;
  /** Tgid of a task, for the tasks that are threads of a process. */
  threads?: Record<number, number>;
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
    readCommand: (pid) => w.commands?.[pid] ?? null,
    threadGroupOf: (pid) => w.threads?.[pid] ?? (w.procs?.[pid] ? pid : undefined),
  };
}

/** self 500 → 400 → 300 → 1, each with start time `s<pid>`. */
const chain: Record<number, ProcInfo> = { 500: { ppid: 400, start: 's500' }, 400: { ppid: 300, start: 's400' }, 300: { ppid: 1, start: 's300' }, 1: { ppid: 0, start: 's1' } };
const rec = (pid: number, extra: Partial<SessionRecord> = {}): SessionRecord => ({ pid, sessionId: SID, cwd: '/srv/api', procStart: `s${pid}`, ...extra });

describe('identity: the environment is only a check on the ancestry (issue 20 §1)', () => {
  it('CLAUDE_PID naming the ancestor whose record is live resolves as that session, by the climb', () => {
    const r = readers({ env: { CLAUDE_PID: '300', CLAUDE_CODE_SESSION_ID: SID, USER: 'ceo' }, username: 'aaron', procs: chain, records: { 300: rec(300, { name: 'api' }) } });
    const id = resolveIdentity(r);
    expect(id).toMatchObject({ resolved: true, kind: 'agent', id: SID, from: `claude:${SID}`, origin: '/srv/api', via: 'ancestry', pid: 300, sessionId: SID, user: 'aaron' });
    expect(id.followedClear).toBeUndefined();
    expect(r.recordReads).toEqual([400, 300]);
  });

  it('CLAUDE_PID of another live session that is not an ancestor: the ancestry decides', () => {
    const other = { ...chain, 900: { ppid: 1, start: 's900' } };
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '900', CLAUDE_CODE_SESSION_ID: SID_NEW }, procs: other, records: { 900: rec(900, { sessionId: SID_NEW }), 400: rec(400) } }));
    expect(id).toMatchObject({ resolved: true, via: 'ancestry', pid: 400, id: SID });
    expect(id.reason).toContain('CLAUDE_PID 900 is not this session');
    // With no session in the ancestry, the variables of another session are refused, never that session.
    const alone = resolveIdentity(readers({ env: { CLAUDE_PID: '900', CLAUDE_CODE_SESSION_ID: SID_NEW }, procs: other, records: { 900: rec(900, { sessionId: SID_NEW }) } }));
    expect(alone.resolved).toBe(false);
    expect(alone.refused).toMatch(/not in its process ancestry/);
    expect(alone.reason).toContain('CLAUDE_PID 900 is not an ancestor');
  });

  it("a worker's tool that names its lead's pid (an ancestor further up) is still the worker: the nearest session decides", () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300', CLAUDE_CODE_SESSION_ID: SID }, procs: chain, records: { 300: rec(300), 400: rec(400, { sessionId: SID_NEW }) } }));
    expect(id).toMatchObject({ resolved: true, pid: 400, id: SID_NEW });
  });

  it('CLAUDE_PID naming a thread of an ancestor (or of this process) agrees with the ancestry; a thread of another process does not', () => {
    const procs = { ...chain, 4001: { ppid: 300, start: 's4001' }, 9001: { ppid: 1, start: 's9001' } };
    const ofAncestor = resolveIdentity(readers({ env: { CLAUDE_PID: '4001' }, procs, threads: { 4001: 400 }, records: { 4001: rec(4001) } }));
    expect(ofAncestor).toMatchObject({ resolved: true, via: 'env', pid: 4001 });
    const ofSelf = resolveIdentity(readers({ env: { CLAUDE_PID: '4001' }, procs, threads: { 4001: 500 }, records: { 4001: rec(4001) } }));
    expect(ofSelf).toMatchObject({ resolved: true, via: 'env', pid: 4001 });
    const ofOther = resolveIdentity(readers({ env: { CLAUDE_PID: '9001' }, procs, threads: { 9001: 9000 }, records: { 9001: rec(9001) } }));
    expect(ofOther.refused).toBeDefined();
  });

  it('a record whose start time does not match (recycled pid) is not that session', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300', CLAUDE_CODE_SESSION_ID: SID }, username: 'aaron', procs: chain, records: { 300: rec(300, { procStart: 'other' }) } }));
    expect(id.resolved).toBe(false);
    // Claude Code's variables with no live session behind them: refused, not the person.
    expect(id.refused).toMatch(/carries the environment of Claude Code session 1111.*not in its process ancestry/);
  });

  it('a record naming another pid than its file is not that session', () => {
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '300' }, procs: chain, records: { 300: { ...rec(300), pid: 301 } } }));
    expect(id.resolved).toBe(false);
    expect(id.refused).toContain('(CLAUDE_PID)');
  });

  it('a dead CLAUDE_PID changes nothing: the climb', () => {
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

  it('resolveStartedFor: the session of the claude process a detached conduit resolved to, following a /clear, refused once it is gone', () => {
    const detached = { 500: { ppid: 1, start: 's500' }, 1: { ppid: 0, start: 's1' }, 300: { ppid: 1, start: 's300' } };
    expect(resolveStartedFor(readers({ procs: detached, records: { 300: rec(300, { sessionId: SID_NEW }) } }), { pid: 300, start: 's300' })).toMatchObject({ resolved: true, id: SID_NEW, pid: 300 });
    expect(resolveStartedFor(readers({ procs: { ...detached, 300: { ppid: 1, start: 'recycled' } }, records: { 300: rec(300) } }), { pid: 300, start: 's300' }).refused).toMatch(/has ended/);
    expect(resolveStartedFor(readers({ procs: detached, records: {} }), { pid: 300, start: 's300' }).refused).toMatch(/has ended/);
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

  it('human: external:<user>@<terminal>, id = the sanitized name of the user the process runs as', () => {
    const id = resolveIdentity(readers({ env: {}, username: 'Ann Lee', procs: chain, terminal: 'pts-3', cwd: '/home/ann/p/' }));
    expect(id).toMatchObject({ resolved: false, kind: 'human', id: 'Ann_Lee', from: 'external:Ann_Lee@pts-3', terminal: 'pts-3', origin: '/home/ann/p' });
    expect(id.refused).toBeUndefined();
  });

  it('human without a terminal: external:<user>; $USER and $LOGNAME never rename the person (issue 14 §6)', () => {
    expect(resolveIdentity(readers({ env: {}, username: 'carol' })).from).toBe('external:carol');
    expect(resolveIdentity(readers({ env: { USER: 'ceo', LOGNAME: 'ceo' }, username: 'carol' })).id).toBe('carol');
    expect(resolveIdentity(readers({ env: {}, username: '../../etc' })).id).toBe('etc');
  });
});

describe('identity: a detached process that keeps a session env (issue 14 §6, issue 20 §1)', () => {
  it('CLAUDE_CODE_SESSION_ID of a live session, no CLAUDE_PID, no ancestry: refused, neither that session nor the person', () => {
    const detached = { 500: { ppid: 1, start: 's500' }, 1: { ppid: 0, start: 's1' }, 300: { ppid: 1, start: 's300' } };
    const id = resolveIdentity(readers({ env: { CLAUDE_CODE_SESSION_ID: SID, USER: 'ceo' }, procs: detached, records: { 300: rec(300) } }));
    expect(id.resolved).toBe(false);
    expect(id.refused).toMatch(/Claude Code session 11111111-2222-4333-8444-555555555555 \(CLAUDE_CODE_SESSION_ID\), but that session is not in its process ancestry/);
    // Any one of Claude Code's variables is enough; with none, the person.
    expect(resolveIdentity(readers({ env: { CLAUDECODE: '1' }, procs: detached })).refused).toContain('(CLAUDECODE)');
    expect(resolveIdentity(readers({ env: {}, procs: detached })).refused).toBeUndefined();
  });
});

describe('identity: system readers', () => {
  it('parseProcStat handles a comm with spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    expect(parseProcStat(`1234 (a) b (c)) ${fields.join(' ')}`)).toEqual({ ppid: 4, start: '22', state: '3' });
    expect(parseProcStat('garbage')).toBeNull();
  });

  it('procInfoFromProc reads this process; procInfoFromPs refuses a pid that cannot be one without asking ps', () => {
    // Whether procInfoFromPs agrees with /proc needs `ps`, a child process: test/e2e/identity.test.ts.
    const me = procInfoFromProc(process.pid);
    expect(me?.ppid).toBe(process.ppid);
    expect(me?.start).toMatch(/^\d+$/);
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


describe('identity: agents that are not Claude Code (issue #10 §17)', () => {
  // Real chains: 500 (attend) → 400 (a shell) → 300 (the agent CLI) → 1.
  const chainNumeric: Record<number, ProcInfo> = { 500: { ppid: 400, start: '5000' }, 400: { ppid: 300, start: '4000' }, 300: { ppid: 1, start: '3000' }, 1: { ppid: 0, start: '1' } };
  it.each([
    ['codex', ['node', '/usr/lib/node_modules/@openai/codex/bin/codex.js', 'exec']],
    ['codex', ['/usr/local/bin/codex']],
    ['gemini', ['node', '/home/u/.npm/_npx/x/node_modules/@google/gemini-cli/dist/index.js']],
    ['aider', ['/usr/bin/python3', '-m', 'aider', '--model', 'x']],
    ['aider', ['/home/u/.local/bin/aider']],
    ['opencode', ['/home/u/.opencode/bin/opencode']],
  ])('%s from %j in the ancestry is an agent with its own id', (name, argv) => {
    const id = resolveIdentity(readers({ env: {}, procs: chainNumeric, commands: { 400: ['/bin/bash'], 300: argv } }));
    expect(id).toMatchObject({ resolved: false, kind: 'agent', via: 'agent-cli', id: `${name}-${(300).toString(36)}.${(3000).toString(36)}` });
    expect(id.from).toBe(`agent:${id.id}`);
  });

  it('two instances of one agent CLI are two identities; a plain terminal stays the human', () => {
    const a = resolveIdentity(readers({ env: {}, procs: chainNumeric, commands: { 300: ['/usr/local/bin/codex'] } }));
    const b = resolveIdentity(readers({ env: {}, procs: { ...chainNumeric, 300: { ppid: 1, start: '3999' } }, commands: { 300: ['/usr/local/bin/codex'] } }));
    expect(a.id).not.toBe(b.id);
    const human = resolveIdentity(readers({ env: {}, username: 'aaron', procs: chainNumeric, commands: { 400: ['-bash'], 300: ['/usr/sbin/sshd'] } }));
    expect(human).toMatchObject({ kind: 'human', id: 'aaron' });
    // Not fooled by an argument that merely names one.
    expect(resolveIdentity(readers({ env: {}, procs: chainNumeric, commands: { 300: ['vim', 'codex'] } })).kind).toBe('human');
  });

  it('a harness declares itself with ATTEND_AGENT (and ATTEND_AGENT_ID per instance), in a namespace of its own; a bad name is ignored', () => {
    expect(resolveIdentity(readers({ env: { ATTEND_AGENT: 'my-bot', ATTEND_AGENT_ID: 'run-7' }, username: 'aaron', procs: chain }))).toMatchObject({ kind: 'agent', via: 'declared', id: 'my-bot.run-7@aaron', from: 'agent:my-bot.run-7@aaron' });
    expect(resolveIdentity(readers({ env: { ATTEND_AGENT: 'my-bot' }, username: 'aaron', procs: chain }))).toMatchObject({ kind: 'agent', id: 'my-bot@aaron' });
    const bad = resolveIdentity(readers({ env: { ATTEND_AGENT: 'not a name!' }, username: 'aaron', procs: chain }));
    expect(bad).toMatchObject({ kind: 'human', id: 'aaron' });
    expect(bad.reason).toContain('ATTEND_AGENT is not a name');
  });

  it("a declaration can never take a session's id, a username or an agent CLI's id (issue 20 attack 1)", () => {
    const [head, ...rest] = SID.split('-');
    const id = resolveIdentity(readers({ env: { ATTEND_AGENT: head!, ATTEND_AGENT_ID: rest.join('-') }, username: 'aaron', procs: chain }));
    expect(id.kind).toBe('agent');
    expect(id.id).not.toBe(SID);
    expect(id.id).toMatch(/@aaron$/);
    expect(isDeclaredAgentId(id.id)).toBe(true);
    for (const other of [SID, 'aaron', 'codex-8c.2bc', 'box:aaron']) expect(isDeclaredAgentId(other), other).toBe(false);
    // fast-check: whatever the name and instance, the id holds one `@` and is never a session id's shape.
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,31}$/), fc.string({ maxLength: 80 }), fc.string({ minLength: 1, maxLength: 20 }), (name, inst, user) => {
        const d = declaredAgentId(name, inst, user);
        return d.split('@').length === 2 && !isGlobalId(d) && d !== sanitizeMemberId(user) && isDeclaredAgentId(d);
      }),
    );
  });

  it('under a live session or an agent CLI, ATTEND_AGENT is ignored: a session cannot rename itself (issue 20 attack 8)', () => {
    const underSession = resolveIdentity(readers({ env: { ATTEND_AGENT: 'free', CLAUDE_PID: '300' }, procs: chain, records: { 300: rec(300) } }));
    expect(underSession).toMatchObject({ kind: 'agent', id: SID, via: 'ancestry' });
    const underCodex = resolveIdentity(readers({ env: { ATTEND_AGENT: 'free' }, procs: chainNumeric, commands: { 300: ['/usr/local/bin/codex'] } }));
    expect(underCodex.via).toBe('agent-cli');
    // A session's tool that detached and declares itself carries the session's variables: refused.
    const detached = resolveIdentity(readers({ env: { ATTEND_AGENT: 'free', CLAUDECODE: '1' }, procs: { 500: { ppid: 1, start: 's500' }, 1: { ppid: 0, start: 's1' } } }));
    expect(detached.refused).toContain('(CLAUDECODE)');
  });

  it('an agent CLI nearer than the session whose CLAUDE_PID it inherited is the agent CLI (codex run by a session)', () => {
    const procs = { 500: { ppid: 400, start: '5000' }, 400: { ppid: 300, start: '4000' }, 300: { ppid: 200, start: '3000' }, 200: { ppid: 1, start: '2000' }, 1: { ppid: 0, start: '1' } };
    const id = resolveIdentity(readers({ env: { CLAUDE_PID: '200', CLAUDE_CODE_SESSION_ID: SID }, procs, commands: { 300: ['/usr/local/bin/codex'] }, records: { 200: rec(200, { procStart: '2000' }) } }));
    expect(id).toMatchObject({ kind: 'agent', via: 'agent-cli' });
  });

  it("an agent CLI's parent is the person at whose terminal it started, or the session whose tool started it (lineage climbs from the CLI's process)", () => {
    // From a terminal: the person's child, so in one group with the sessions the person started.
    const fromTerminal = readers({ env: {}, username: 'aaron', procs: chainNumeric, commands: { 400: ['/bin/bash'], 300: ['/usr/local/bin/codex'] } });
    const a = resolveIdentity(fromTerminal);
    expect(a).toMatchObject({ via: 'agent-cli', cliPid: 300 });
    expect(a.pid).toBeUndefined();
    expect(findParent(a, fromTerminal)).toBe('aaron');
    // From a session's tool: that session's child.
    const procs = { 500: { ppid: 400, start: '5000' }, 400: { ppid: 300, start: '4000' }, 300: { ppid: 200, start: '3000' }, 200: { ppid: 1, start: '2000' }, 1: { ppid: 0, start: '1' } };
    const underSession = readers({ env: {}, username: 'aaron', procs, commands: { 300: ['/usr/local/bin/codex'] }, records: { 200: rec(200, { procStart: '2000' }) } });
    const b = resolveIdentity(underSession);
    expect(b.via).toBe('agent-cli');
    expect(findParent(b, underSession)).toBe(SID);
    // A declared agent has no process to climb from: no parent.
    const declared = readers({ env: { ATTEND_AGENT: 'bot' }, username: 'aaron', procs: chain });
    expect(findParent(resolveIdentity(declared), declared)).toBeUndefined();
  });

});
