// One sensor wake: take what is pending from the ledger and turn it into observation lines
// (spec §5). The writer is injected, so this is testable against a real temporary bus with
// the lines captured; `tools/sensor/run.ts` is the long-running loop around it.

import type { Identity } from '../identity/resolve.js';
import { takePending } from '../bus/ledger.js';
import type { Message, Reporter } from '../bus/signals.js';
import { noteSurfaced } from '../bus/surfaced.js';
import { DIGEST_THRESHOLD, type NameLookup, TEACH_LINE, countDigest, formatDigest, formatObservation } from '../wire/party.js';

export interface ScanDeps {
  root: string;
  now(): number;
  reporter: Reporter;
  names(me: string): NameLookup;
  /** Write one line to the Monitor; throws when stdout is gone (EPIPE). */
  write(line: string): void;
  warn(line: string): void;
  /** With `--trace`: one stderr line naming the ids a digest stood for. */
  trace?: ((line: string) => void) | undefined;
}

export interface ScanResult {
  delivered: string[];
  digest: boolean;
  /** stdout was closed while writing: the sensor must stop. */
  closed: boolean;
}

export function scanOnce(deps: ScanDeps, who: Identity): ScanResult {
  const res: ScanResult = { delivered: [], digest: false, closed: false };
  takePending(root(deps), who, { now: deps.now(), reporter: deps.reporter, warn: deps.warn }, (p) => {
    const consume: string[] = [];
    const emit = (line: string): boolean => {
      if (res.closed) return false;
      try {
        deps.write(line);
        return true;
      } catch {
        res.closed = true;
        return false;
      }
    };
    if (p.hidden > 0) emit(`[attend] ${p.hidden} earlier message${p.hidden === 1 ? '' : 's'} not shown; attend inbox`);
    for (const inv of p.invited) {
      emit(`[attend] invited to #${inv.channel}: ${inv.count} earlier message${inv.count === 1 ? '' : 's'} to read, ${inv.older} older not shown`);
    }
    if (p.fresh.length === 0) return { consume, result: undefined };
    if (p.fresh.length > DIGEST_THRESHOLD) {
      // The digest stands for every message in the wake; their headers are in `attend inbox`.
      if (emit(formatDigest(countDigest(p.fresh, who.id)))) {
        consume.push(...p.fresh.map((m) => m.id));
        res.digest = true;
        deps.trace?.(`attend: trace digest ids=${p.fresh.map((m) => m.id).join(',')}`);
      }
    } else {
      const names = deps.names(who.id);
      let newest: Message | undefined;
      for (const m of p.fresh) {
        const lines = formatObservation(m, names);
        let ok = true;
        for (const line of lines) ok = ok && emit(line);
        // A message cut off mid-way by a closed stdout was never seen: leave it pending.
        if (!ok) break;
        consume.push(m.id);
        newest = m;
      }
      if (newest) noteSurfaced(root(deps), who.id, { id: newest.id, time: newest.time });
    }
    if (consume.length > 0 && !p.ledger.taught && emit(TEACH_LINE)) p.ledger.taught = true;
    res.delivered = consume;
    return { consume, result: undefined };
  });
  return res;
}

function root(deps: ScanDeps): string {
  return deps.root;
}
