// A hook's stdin, read the one bounded way every hook command uses: a hook must never hang
// the session it serves, nor a harness that keeps stdin open.

/** The Stop hook's payload is a small JSON object; past this it is not one. */
const HOOK_STDIN_MAX = 1024 * 1024;
/** How long the drain waits for a payload that has not ended (a harness that keeps stdin open). */
const HOOK_STDIN_WAIT_MS = 1_500;

/**
 * Read the hook payload, bounded (issue #9 §5): it ends at EOF, as soon as what arrived
 * parses as one JSON value, at HOOK_STDIN_MAX bytes, or after HOOK_STDIN_WAIT_MS —
 * whichever comes first — so a caller that never closes stdin cannot block the drain.
 */
export async function readHookStdin(stdin: NodeJS.ReadableStream, waitMs = HOOK_STDIN_WAIT_MS): Promise<string> {
  // By hand at a terminal there is no payload to wait for.
  if ((stdin as { isTTY?: boolean }).isTTY) return '';
  return new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.off('data', onData);
      stdin.off('end', finish);
      stdin.off('error', finish);
      stdin.pause();
      // Let go of the descriptor so a stdin nobody closes does not keep the process alive.
      (stdin as { unref?: () => void }).unref?.();
      (stdin as { destroy?: () => void }).destroy?.();
      resolve(Buffer.concat(chunks).toString('utf8').slice(0, HOOK_STDIN_MAX));
    };
    const onData = (chunk: Buffer | string) => {
      const b = Buffer.from(chunk);
      chunks.push(b);
      size += b.length;
      if (size >= HOOK_STDIN_MAX) return finish();
      try {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        finish();
      } catch {
        // not a whole JSON value yet
      }
    };
    const timer = setTimeout(finish, waitMs);
    stdin.on('data', onData);
    stdin.once('end', finish);
    stdin.once('error', finish);
    stdin.resume();
  });
}

/**
 * The same bounds, read synchronously from a descriptor: for the PreToolUse hook, which runs
 * before every edit and would pay for the stream machinery (net, streams) only to read one
 * small payload. Reads until EOF, until what arrived parses as JSON, or HOOK_STDIN_MAX bytes;
 * a descriptor with nothing yet (EAGAIN) is asked again until HOOK_STDIN_WAIT_MS have passed.
 * A blocking pipe that stays open and empty would block here, where the async reader times
 * out: Claude Code writes the payload before it waits for the hook, and bounds the hook by
 * its `timeout` (5 s for this one), after which the call goes ahead.
 */
export function readHookStdinSync(fd: number, waitMs = HOOK_STDIN_WAIT_MS): string {
  const { fstatSync, readSync } = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  // A terminal (by hand) has no payload to wait for.
  if (fstatSync(fd).isCharacterDevice()) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  const deadline = Date.now() + waitMs;
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' || Date.now() > deadline) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
      continue;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    size += n;
    if (size >= HOOK_STDIN_MAX) break;
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      break;
    } catch {
      // not a whole JSON value yet
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, HOOK_STDIN_MAX);
}
