// `attend inbox --drain`: the Stop hook. It writes its own output, inside the ledger's lock,
// because a wake is recorded in flight, shown, then confirmed (docs/architecture.md,
// "Delivery"), which leaves no room to return the text and let cli.ts print it after the
// record. A hook error must never block the session: every failure ends as a line on stderr
// and exit 0.

import type { Ctx } from '../context.js';
import { writePresence } from '../../bus/presence/index.js';
import { handOver } from '../../bus/delivery/index.js';
import { readKnownNames } from '../../bus/presence/index.js';
import { type DrainFormat, type DrainOutcome, drainOnce, parseStopPayload } from '../../drain/drain.js';
import { type NameLookup, nameLookup } from '../../wire/display.js';

interface DrainInput {
  format: DrainFormat;
  /** The hook's stdin (JSON); '' when there is none. */
  payload: string;
  trace: boolean;
}

type DrainCommandResult = DrainOutcome | { output: null; reason: 'not-a-session' | 'error'; message?: string };

export function runDrain(ctx: Ctx, input: DrainInput): DrainCommandResult {
  const warn = (line: string) => void ctx.stderr.write(`${line}\n`);
  try {
    const { payload, warning } = parseStopPayload(input.payload);
    if (warning) warn(warning);
    const who = ctx.identity();
    if (!who.resolved && input.format === 'hook') {
      // The gate: only a resolved Claude Code session has a Stop hook to deliver at. The
      // plain format is also the generic harness's verb (any agent CLI or script, issue #6
      // §4), so it drains for whoever is asking, with that identity's own ledger.
      warn(`attend: --drain --format hook needs a Claude Code session (${who.reason}); nothing delivered`);
      return { output: null, reason: 'not-a-session' };
    }
    const root = ctx.root();
    handOver(root, who, ctx.env);
    writePresence(root, { id: who.id, kind: who.kind, origin: who.origin, heartbeat: ctx.now(), pid: ctx.pid, role: 'drain' });
    const known = readKnownNames(root);
    const names = (me: string): NameLookup => nameLookup(ctx.live(), me, known);
    return drainOnce(
      {
        root,
        now: ctx.now,
        reporter: ctx.reporter,
        names,
        write: (text) => void ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
        warn,
        trace: input.trace ? warn : undefined,
      },
      who,
      payload,
      input.format,
    );
  } catch (err) {
    warn(`attend: the drain failed: ${(err as Error).message ?? String(err)}`);
    return { output: null, reason: 'error', message: (err as Error).message };
  }
}

