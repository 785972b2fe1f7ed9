// What the adapters tell `attend status` and `attend adapter status`: per outlet, whether its
// runner lives, how many messages it delivered, and what waits, why, and when it is tried
// again. Read from the outlets' status.json files (ledger.ts); nothing here loads Fastify.

import { formatAge, neutralize } from '../wire/render.js';
import { type Waiting, readStates } from './ledger.js';

export interface OutletHealth {
  outlet: string;
  running: boolean;
  pid: number;
  delivered: number;
  waiting: Waiting[];
  listen: string | null;
  updated: string;
}

export interface AdapterHealth {
  outlets: OutletHealth[];
  /** One line per outlet, then one per waiting message (at most five each). */
  lines: string[];
}

export function adapterHealth(root: string, now: number, alive: (pid: number) => boolean): AdapterHealth {
  const outlets = readStates(root).map((s) => ({
    outlet: s.outlet,
    running: alive(s.pid),
    pid: s.pid,
    delivered: s.delivered,
    waiting: s.waiting,
    listen: s.listen ?? null,
    updated: new Date(s.updated).toISOString(),
  }));
  return { outlets, lines: healthLines(outlets, now) };
}

export function healthLines(outlets: OutletHealth[], now: number): string[] {
  const lines: string[] = [];
  for (const o of outlets) {
    lines.push(`${neutralize(o.outlet)}: ${o.running ? 'running' : 'not running'}, ${o.delivered} delivered, ${o.waiting.length} waiting${o.listen ? `, replies on ${o.listen}` : ''}`);
    for (const w of o.waiting.slice(0, 5)) {
      const next = w.next - now;
      lines.push(`  ${w.id} waits ${formatAge(Math.max(0, now - w.since))}: ${neutralize(w.error)}; ${w.attempts} tr${w.attempts === 1 ? 'y' : 'ies'}, next ${next <= 0 ? 'now' : `in ${Math.ceil(next / 1000)}s`}`);
    }
    if (o.waiting.length > 5) lines.push(`  … and ${o.waiting.length - 5} more`);
  }
  return lines;
}
