// CLI wiring for file claims (issue 23 §2): claim, release, claims [--check]. The verbs are
// tools/verbs/claims.ts; the PreToolUse hook's fast path is fast-claims.ts.

import type { Command } from 'commander';
import { type Registrar, examples } from './registrar.js';
import type { Io } from './io.js';
import type { Ctx } from './context.js';
import { formatAge, neutralize } from '../wire/render.js';
import { EXIT } from '../wire/errors.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

interface Shown {
  pattern: string;
  worktree: string;
  holder: { name: string; kind: string };
  reason: string | null;
  expires: number;
  mine: boolean;
}

function claimLine(ctx: Ctx, c: Shown): string {
  const who = c.mine ? 'you' : `${neutralize(c.holder.name)} (${c.holder.kind})`;
  const why = c.reason ? ` — ${neutralize(c.reason)}` : '';
  return `${neutralize(c.pattern)} in ${neutralize(c.worktree)}: ${who}, ${formatAge(Math.max(0, c.expires - ctx.now()))} left${why}`;
}

export const registerClaims: Registrar = (program: Command, ctx: Ctx, io: Io) => {
  program
    .command('claim')
    .description('claim files or globs for a while (advisory): other sessions are told before they edit them')
    .argument('<paths...>', 'files, directories or globs (quote globs), relative to here or absolute')
    .option('--ttl <duration>', 'how long the claim holds unless renewed or released: 30m, 2h, 1d (default 1h)')
    .option('--reason <text>', 'why: shown to whoever is about to edit the file')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples(['attend claim src/parser.ts --reason "rewriting the tokenizer"', "attend claim 'src/wire/**' --ttl 2h", 'attend claim docs/ --ttl 30m']) +
        '\nA claim ends when its TTL runs out, when you release it, or when your session ends. Worktrees and clones of one repository are one project. Claiming what another live party holds exits 7 and claims nothing.\n',
    )
    .action(async (paths: string[], opts: { ttl?: string; reason?: string; json?: boolean }) => {
      const { runClaim } = await import('../verbs/claims.js');
      const r = runClaim(ctx, { paths, ttl: opts.ttl, reason: opts.reason });
      if (opts.json) return io.json(r);
      io.out(r.claims.map((c) => `claimed ${claimLine(ctx, c)}`).join('\n'));
    });

  program
    .command('release')
    .description('release your claims on these paths (all your claims without any)')
    .argument('[paths...]', 'the paths or globs as you claimed them')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend release src/parser.ts', 'attend release']))
    .action(async (paths: string[], opts: { json?: boolean }) => {
      const { runRelease } = await import('../verbs/claims.js');
      const r = runRelease(ctx, { paths: paths.length > 0 ? paths : undefined });
      if (opts.json) return io.json(r);
      io.out(r.released.length === 0 ? 'You held no such claim.' : r.released.map((c) => `released ${neutralize(c.pattern)} in ${neutralize(c.worktree)}`).join('\n'));
    });

  program
    .command('claims')
    .description('list the claims that hold now; --check <path>: exit 7 when another live party holds it')
    .option('--check <path>', 'is this file held by someone else? exit 0 free, 7 held (repeatable)', collect)
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples(['attend claims', 'attend claims --json', 'attend claims --check src/parser.ts || echo "ask first"']) +
        '\nAn agent CLI without hooks runs `attend claims --check <file>` before it edits: exit 0 when the file is free (or yours), 7 when another live party holds it, with who, why and how to ask them.\n',
    )
    .action(async (opts: { check?: string[]; json?: boolean }) => {
      const claims = await import('../verbs/claims.js');
      if (opts.check !== undefined) {
        const { askCommand, describeHolder } = await import('../verbs/claims-check.js');
        const checks = opts.check.map((path) => claims.runCheck(ctx, { path }));
        if (checks.some((c) => c.claims.length > 0)) io.setExitCode(EXIT.held);
        if (opts.json) return io.json({ checks: checks.map((c) => ({ path: c.path, project: c.key.project, rel: c.key.rel, held: c.claims.length > 0, claims: c.claims })) });
        const now = ctx.now();
        const lines = checks.flatMap((c) =>
          c.claims.length === 0 ? [`${neutralize(c.path)}: free`] : c.claims.map((h) => `${neutralize(c.path)}: ${describeHolder(h, now)}; ask them: ${askCommand(h)}`),
        );
        return io.out(lines.join('\n'));
      }
      const r = claims.runClaims(ctx);
      if (opts.json) return io.json(r);
      io.out(r.claims.length === 0 ? 'No claims hold on this bus.' : r.claims.map((c) => claimLine(ctx, c)).join('\n'));
    });
};
