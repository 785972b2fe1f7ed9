// The sensor at rest: CPU over 60 s (20 s with quick) and RSS of a running `attend run`
// with nothing arriving, read from /proc.

import { readFileSync } from 'node:fs';
import { fakeSession, startSensor } from './latency.mjs';

function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export default async function ({ bin, tmp, quick }) {
  const seconds = quick ? 20 : 60;
  const s = fakeSession(tmp, 'idle');
  const sensor = startSensor(bin, s);
  try {
    await sensor.ready();
    await new Promise((r) => setTimeout(r, 3000));
    const pid = sensor.proc.pid;
    const t0 = performance.now();
    const c0 = cpuTicks(pid);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c1 = cpuTicks(pid);
    const wall = (performance.now() - t0) / 1000;
    const cpu = ((c1 - c0) / 100 / wall) * 100; // CLK_TCK is 100 on Linux
    const rss = rssKiB(pid);
    return {
      title: 'Sensor at rest',
      markdown: [
        `\`attend run\` watching a session's tray and \`#open\` with nothing arriving, over ${seconds} s (after a 3 s settle).`,
        '',
        '| CPU (share of one core) | RSS | goal |',
        '|---|---|---|',
        `| ${cpu.toFixed(2)} % | ${(rss / 1024).toFixed(1)} MiB | CPU < 1 % |`,
      ].join('\n'),
    };
  } finally {
    sensor.proc.kill('SIGTERM');
    s.proc.kill('SIGKILL');
  }
}
