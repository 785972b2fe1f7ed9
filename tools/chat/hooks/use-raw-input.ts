// The bytes the terminal sent, before Ink parses them: mouse-wheel reports (SGR, with
// --mouse) scroll the feed, and the last chunk is kept for decodeKey (keys.ts), which needs
// distinctions Ink's parse loses (DEL against the Delete key, a burst of DELs).

import { useStdin } from 'ink';
import { useEffect, useRef } from 'react';

export function useRawInput(scroll: (delta: number) => void): { readonly current: string } {
  const { internal_eventEmitter } = useStdin();
  const lastRaw = useRef('');
  const scrollRef = useRef(scroll);
  scrollRef.current = scroll;
  useEffect(() => {
    const onRaw = (data: string) => {
      lastRaw.current = data;
      const m = /\[<(\d+);\d+;\d+[Mm]/.exec(data);
      if (m) {
        const b = Number(m[1]);
        if (b === 64) scrollRef.current(3);
        if (b === 65) scrollRef.current(-3);
      }
    };
    // Prepended, so the chunk is recorded before Ink's own listener runs the key handler.
    internal_eventEmitter?.prependListener('input', onRaw);
    return () => {
      internal_eventEmitter?.removeListener('input', onRaw);
    };
  }, [internal_eventEmitter]);
  return lastRaw;
}
