// The one way a long-running command (`attend run`, `attend deliver`) learns it should stop:
// the caller's promise if it gave one (tests), else the first SIGTERM, SIGINT or SIGHUP. The
// listeners are removed by `dispose`, so an in-process run leaves none behind.

export function stopSignal(given: Promise<void> | undefined): { signal: Promise<void>; dispose(): void } {
  if (given) return { signal: given, dispose: () => {} };
  const handlers: [NodeJS.Signals, () => void][] = [];
  const signal = new Promise<void>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      const h = () => resolve();
      handlers.push([sig, h]);
      process.on(sig, h);
    }
  });
  return { signal, dispose: () => { for (const [sig, h] of handlers) process.off(sig, h); } };
}
