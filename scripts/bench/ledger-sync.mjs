// The ledger's fdatasync (issue 21 §5: a crash repeats only the messages in flight). Every
// delivery cycle that consumed something syncs its ledger log once before it ends, where
// issue #12 §3 had left it unsynced (one journal commit per session per broadcast). The
// fan-out of scripts/bench/fanout.mjs with this build and with a copy of it whose append is
// not synced (the one call removed), in turns, so machine load hits both alike.

import { measure } from './fanout.mjs';
import { patchedBuild } from './send.mjs';

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 5 : 20;
  const rounds = quick ? 10 : 50;
  const turns = quick ? 1 : 3;
  const bare = patchedBuild(bin, tmp, 'without-ledger-sync', [{ file: 'tools/bus/delivery/ledger-log.js', find: /fdatasyncSync\(fd\);/g, replace: '/* bench: not synced */' }]);
  const runs = { with: [], without: [] };
  for (let t = 0; t < turns; t++) {
    for (const [name, b] of [['with', bin], ['without', bare]]) runs[name].push(await measure(b, tmp, n, rounds, 1));
  }
  const med = (xs, k) => [...xs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const row = (label, xs) => `| ${label} | ${med(xs, 'p50').toFixed(1)} ms | ${med(xs, 'p99').toFixed(1)} ms |`;
  return {
    title: "The ledger's fdatasync",
    markdown: [
      `${n} live sessions, each with its own \`attend run\`; ${rounds} broadcasts to #open one at a time, timed until the last sensor printed the message's header, as in "Fan-out against live sessions"; ${turns} turn${turns === 1 ? '' : 's'} each of this build and of a copy whose ledger append is not fdatasync'ed, alternating (median of the turns). The sensor records a wake in flight, prints it, then settles it and syncs (issue 21 §6), so what the sync costs shows as a sensor still in its previous cycle's sync when the next broadcast comes.`,
      '',
      '| ledger append | last sensor p50 | last sensor p99 |',
      '|---|---|---|',
      row("fdatasync'ed (this build)", runs.with),
      row('not synced', runs.without),
    ].join('\n'),
  };
}
