// `attend run`: start the sensor for this session. Long-running: it streams observation
// lines until its Claude process is gone, stdout closes, or a signal arrives.

import { writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import type { Ctx } from '../context.js';
import { usageError } from '../../wire/errors.js';
import { createReaderProbe } from '../../sensor/reader-probe.js';
import { type SensorExit, runSensor } from '../../sensor/run.js';
import { stopSignal } from './stop-signal.js';

interface RunInput {
  poll: boolean;
  interval: number;
  trace: boolean;
  /** Tests stop an in-process sensor with this; the CLI uses process signals. */
  stopSignal?: Promise<void>;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * A line writer for fd 1 that is synchronous and flushed: each line is out before the
 * ledger confirms the wake it recorded in flight (issue 21 §6), and a closed pipe throws
 * EPIPE here rather than later in an 'error' event, so what it cut off stays pending.
 */
function fdLineWriter(fd: number): (line: string) => void {
  return (line) => {
    const buf = Buffer.from(`${line}\n`, 'utf8');
    let off = 0;
    while (off < buf.length) {
      try {
        off += writeSync(fd, buf, off);
      } catch (err) {
        // A non-blocking pipe that is full: wait for the reader instead of dropping a line.
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        Atomics.wait(sleeper, 0, 0, 5);
      }
    }
  };
}

/**
 * Past its start, the sensor's process stops tiering code up to V8's optimizing compiler
 * (TurboFan; interpreted and baseline code keep running). A sensor spends about a millisecond
 * of JavaScript per message, the same code on the same messages in every session, so each
 * optimizing compile (10-30 ms of CPU, as a function turns hot) came to every sensor at the
 * same message: with 100 sessions on two cores, a few seconds of compiling in one burst, and
 * the fan-out's p99 (issue #12 §3). Without them the CPU per message is the same (docs/
 * benchmarks.md, "Fan-out"). The start (the first listing of a long history) keeps the
 * optimizer: what it makes hot is compiled then, before this.
 */
export function steadyState(): void {
  setFlagsFromString('--max-opt=1');
}

export async function runRun(ctx: Ctx, input: RunInput): Promise<SensorExit> {
  if (!Number.isInteger(input.interval) || input.interval < 100 || input.interval > 60_000) {
    throw usageError('--interval takes milliseconds from 100 to 60000');
  }
  const root = ctx.root();
  const who = ctx.identity();
  const onFd1 = ctx.stdout === process.stdout;
  const write = onFd1 ? fdLineWriter(1) : (line: string) => void ctx.stdout.write(`${line}\n`);
  const warn = (line: string) => void ctx.stderr.write(`${line}\n`);
  if (!who.resolved) warn(`attend: not inside a Claude Code session (${who.reason}); watching as ${who.id}`);
  const stop = stopSignal(input.stopSignal);
  try {
    return await runSensor({
      root,
      sessionsDir: ctx.paths.sessionsDir,
      identity: who,
      env: ctx.env,
      pid: ctx.pid,
      now: ctx.now,
      reporter: ctx.reporter,
      procInfo: ctx.procInfo,
      write,
      warn,
      readerGone: onFd1 ? (createReaderProbe(1) ?? undefined) : undefined,
      poll: input.poll,
      pollIntervalMs: input.interval,
      trace: input.trace,
      stopSignal: stop.signal,
      // Only a sensor that owns its process changes how V8 compiles it (not one in a test's).
      ...(onFd1 && !input.stopSignal ? { started: steadyState } : {}),
    });
  } finally {
    stop.dispose();
  }
}
