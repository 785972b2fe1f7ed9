// Who is at the other end of a loopback TCP connection (issue 20 §7, docs/trust.md "Inside
// Claude Code's sandbox"). The kernel's socket table (/proc/net/tcp) names the peer socket's
// owner uid and inode; the process that holds that inode is the peer; its session is the one
// its own record or its ancestry names — never its environment, which the peer chose.
//
// A command in Claude Code's sandbox has its own network namespace and reaches the host only
// through its session's proxy, which runs in the claude process itself (observed on 2.1.332),
// so a sandboxed command's request arrives from the claude process of its own session.

import { readFileSync, readdirSync } from 'node:fs';
import { type IdentityReaders, type SessionRecord, recordMatches, resolveIdentity } from './resolve.js';
import { descriptorsOn } from './system.js';

interface TcpRow {
  /** `0100007F:1F90`: the address and port as the kernel prints them (hex, little-endian address). */
  local: string;
  remote: string;
  uid: number;
  inode: string;
}

/** The rows of /proc/net/tcp (the header line skipped, malformed lines left out). */
export function parseProcNetTcp(text: string): TcpRow[] {
  const rows: TcpRow[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !f[1] || !f[2]) continue;
    const uid = Number(f[7]);
    const inode = f[9] ?? '';
    if (!Number.isInteger(uid) || !/^\d+$/.test(inode)) continue;
    rows.push({ local: f[1], remote: f[2], uid, inode });
  }
  return rows;
}

/** 127.0.0.1:<port> as /proc/net/tcp prints it. */
export function loopbackEndpoint(port: number): string {
  return `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The peer socket of a connection to 127.0.0.1:`localPort` from 127.0.0.1:`remotePort`: its owner and inode. */
function loopbackPeer(remotePort: number, localPort: number, table: string): { uid: number; inode: string } | null {
  const local = loopbackEndpoint(remotePort);
  const remote = loopbackEndpoint(localPort);
  const row = parseProcNetTcp(table).find((r) => r.local === local && r.remote === remote);
  return row ? { uid: row.uid, inode: row.inode } : null;
}

/** Does process `pid` hold the socket `inode` open? (Only our own user's processes can be read.) */
function holds(pid: number, inode: string): boolean {
  return descriptorsOn(pid, `socket:[${inode}]`).length > 0;
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number);
  } catch {
    return [];
  }
}

/** The live session a process belongs to: its own record (it is the claude process), else its ancestry's. */
function sessionOfProcess(pid: number, r: IdentityReaders): SessionRecord | null {
  const own = r.readSessionRecord(pid);
  if (recordMatches(own, pid, r.procInfo(pid))) return own;
  // The climb only: no environment, so nothing the process set for itself counts.
  const who = resolveIdentity({ ...r, env: {}, selfPid: pid });
  return who.kind === 'agent' && who.via === 'ancestry' && who.record ? who.record : null;
}

export type PeerSession = { ok: true; record: SessionRecord; pid: number } | { ok: false; reason: string };

/**
 * The Claude Code session at the other end of a connection to 127.0.0.1:`localPort` from
 * 127.0.0.1:`remotePort`. The live sessions' claude processes are looked at first (a
 * sandboxed command's request comes from its session's proxy, in the claude process), then
 * every process; two holders in different sessions, another user's socket, or no session
 * at all are refused with the reason.
 */
export function peerSession(opts: { remotePort: number; localPort: number; readers: IdentityReaders; sessionPids: number[]; table?: string }): PeerSession {
  let table = opts.table;
  if (table === undefined) {
    try {
      table = readFileSync('/proc/net/tcp', 'utf8');
    } catch (err) {
      return { ok: false, reason: `cannot read /proc/net/tcp (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
    }
  }
  const peer = loopbackPeer(opts.remotePort, opts.localPort, table);
  if (!peer) return { ok: false, reason: `no socket of this machine is connected from port ${opts.remotePort}` };
  const uid = process.getuid?.();
  if (uid !== undefined && peer.uid !== uid) return { ok: false, reason: `the peer runs as uid ${peer.uid}, not ${uid}` };
  for (const pid of opts.sessionPids) {
    if (!holds(pid, peer.inode)) continue;
    const record = sessionOfProcess(pid, opts.readers);
    if (record) return { ok: true, record, pid };
  }
  const found = new Map<string, { record: SessionRecord; pid: number }>();
  let holders = 0;
  for (const pid of allPids()) {
    if (pid === process.pid || !holds(pid, peer.inode)) continue;
    holders++;
    const record = sessionOfProcess(pid, opts.readers);
    if (record) found.set(record.sessionId, { record, pid });
    else return { ok: false, reason: `process ${pid} holds the peer socket and belongs to no live Claude Code session` };
  }
  if (found.size === 1) return { ok: true, ...[...found.values()][0]! };
  if (found.size > 1) return { ok: false, reason: `the peer socket is held in ${found.size} sessions` };
  return { ok: false, reason: holders === 0 ? 'no process holds the peer socket (it closed)' : 'the peer belongs to no live Claude Code session' };
}
