// The relay's trace (`trace: true` in its deps; the CLI sets it from ATTEND_RELAY_TRACE=1):
// the loops log each published chunk and imported batch with its time, and this logs the
// event loop's stalls, which is what delays both.

/** Log every stall of the event loop over `overMs`; returns the stop. */
export function watchStalls(log: (line: string) => void, overMs = 100): () => void {
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - last > overMs) log(`trace: event loop stalled ${now - last}ms`);
    last = now;
  }, 10);
  timer.unref();
  return () => clearInterval(timer);
}
