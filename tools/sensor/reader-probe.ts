// Is anyone still reading the sensor's stdout? (issue #4: a sensor whose stdout closes while
// idle kept its claim until its next write hit EPIPE, so a re-armed Monitor's sensor exited
// "already running".) Checked on every sensor tick, without writing a byte to the reader.
//
// What works on Linux with Node 20, found by trying it against real pipes:
//   - A socket (Node and libuv give a child's 'pipe' stdio a socketpair): a zero-length
//     write(2) fails with EPIPE once the peer has closed (unix_stream_sendmsg checks the
//     shutdown state before sending anything), and sends nothing while it is open.
//   - A FIFO (a shell `|`, mkfifo): a zero-length write returns 0 without looking at readers,
//     reopening /proc/self/fd/1 with O_NONBLOCK did not fail with ENXIO here either, and
//     libuv refuses to poll a write-only pipe. So the probe finds the processes among our
//     ancestors that hold the pipe's read end (Monitor's reader is the Claude process or the
//     shell under it) and watches that they still do: one readlink per tick. A reader that is
//     not an ancestor cannot be watched this way; then EPIPE on the next write still ends the
//     sensor, as before.
//   - Anything else (a file, a terminal): no probe.

import { fstatSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import { descriptorsOn, procInfoFromProc } from '../identity/system.js';

/** Returns true once the reader is known to be gone. */
type ReaderProbe = () => boolean;

const MAX_HOPS = 15;

export function createReaderProbe(fd: number, pid = process.pid): ReaderProbe | null {
  let kind: 'socket' | 'fifo' | 'other';
  try {
    const st = fstatSync(fd);
    kind = st.isSocket() ? 'socket' : st.isFIFO() ? 'fifo' : 'other';
  } catch {
    return null;
  }
  if (kind === 'socket') return socketProbe(fd);
  if (kind === 'fifo' && process.platform === 'linux') return fifoProbe(fd, pid);
  return null;
}

function socketProbe(fd: number): ReaderProbe {
  const empty = Buffer.alloc(0);
  return () => {
    try {
      writeSync(fd, empty);
      return false;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'EPIPE' || code === 'ECONNRESET' || code === 'ENOTCONN';
    }
  };
}

interface Holder {
  pid: number;
  fd: string;
}

function fifoProbe(fd: number, pid: number): ReaderProbe | null {
  let pipe: string;
  try {
    pipe = readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return null;
  }
  let holders: Holder[] = [];
  const ancestors: number[] = [];
  for (let p = parentOf(pid), hops = 0; p !== null && p > 1 && hops < MAX_HOPS; p = parentOf(p), hops++) ancestors.push(p);
  const scan = (pids: number[]) => pids.flatMap((p) => readersIn(p, pipe));
  holders = scan(ancestors);
  if (holders.length === 0) return null;
  return () => {
    if (holders.some((h) => linkOf(h) === pipe)) return false;
    // A holder may have moved the descriptor (dup2, close-on-exec): look again before
    // deciding, among the processes that held it.
    holders = scan([...new Set(holders.map((h) => h.pid))]);
    return holders.length === 0;
  };
}

function linkOf(h: Holder): string | null {
  try {
    return readlinkSync(`/proc/${h.pid}/fd/${h.fd}`);
  } catch {
    return null;
  }
}

/** Descriptors of `pid` open for reading on `pipe` (`pipe:[inode]`). */
function readersIn(pid: number, pipe: string): Holder[] {
  const out: Holder[] = [];
  for (const fd of descriptorsOn(pid, pipe)) {
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1];
      // O_ACCMODE: 0 read-only, 2 read-write; 1 is a writer like us.
      if (flags !== undefined && (parseInt(flags, 8) & 3) !== 1) out.push({ pid, fd });
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

function parentOf(pid: number): number | null {
  return procInfoFromProc(pid)?.ppid ?? null;
}
