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
