// `attend run` never exits on its own while its session lives (issue 21 §2): with the whole
// bus directory gone under it, it warns, keeps its watch and its session, and delivers again
// once the bus is back.

import { describe, expect, it } from 'vitest';
import { removeTree, runBin, type TempBus, useTempBus, waitFor } from '../helpers/bus.js';
import { startSensor } from '../helpers/delivery.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

describe('attend run recovers', () => {
  it('outlives a vanished bus directory and delivers once it is back', async () => {
    const s = session();
    const sensor = startSensor(s.env, ['--interval', '200'], s.cwd);
    try {
      expect(runBin(['send', 'before-the-loss'], { env: bus.env, cwd: bus.dir }).exitCode).toBe(0);
      await waitFor(() => sensor.stdout().includes('before-the-loss'), { timeoutMs: 20_000, what: 'the first message' });
      removeTree(bus.root);
      // Several ticks (2 s each) with no bus at all.
      await new Promise((r) => setTimeout(r, 5_000));
      expect(sensor.proc.exitCode, sensor.stderr()).toBeNull();
      expect(runBin(['send', 'after-the-loss'], { env: bus.env, cwd: bus.dir }).exitCode).toBe(0);
      await waitFor(() => sensor.stdout().includes('after-the-loss'), { timeoutMs: 30_000, what: `the message after the bus came back\n${sensor.stderr()}` });
    } finally {
      sensor.proc.kill('SIGTERM');
      await sensor.exited;
    }
  }, 90_000);
});
