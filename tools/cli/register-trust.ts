// CLI wiring for trust (issue 14): keys, and later grants and delegations. The logic lives
// in tools/bus (keys.ts, policy.ts); this file only parses and prints.

import type { Command } from 'commander';
import type { Registrar } from './cli.js';

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

export const registerTrust: Registrar = (program, ctx, io) => {
  const keys = program
    .command('keys')
    .description("show this node's signing key and the key ids readers verify it by")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend keys', 'attend keys --json', 'attend keys rotate']))
    .action(async (opts: { json?: boolean }) => {
      const { describeKeys } = await import('../bus/keys.js');
      const r = describeKeys({ keysDir: ctx.paths.keysDir, root: ctx.root(), node: ctx.identity().id });
      if (opts.json) return io.json(r);
      io.out(
        [
          `node:        ${r.node}`,
          `key:         ${r.current ?? '(none yet: created on the first message this node writes)'}`,
          `private key: ${r.privateKey}`,
          ...(r.published.length > 0 ? ['published:', ...r.published.map((k) => `  ${k.keyId}  ${k.created}${k.current ? '  (current)' : ''}`)] : ['published:   (none)']),
        ].join('\n'),
      );
    });
  keys
    .command('rotate')
    .description('make a new signing key; the old key id stays published, so old signatures still verify')
    .option('--json', 'print JSON')
    // `keys` has --json too and commander gives a flag to the parent first: read both.
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ json?: boolean }>();
      const { rotateKey } = await import('../bus/keys.js');
      const r = rotateKey({ keysDir: ctx.paths.keysDir, root: ctx.root(), node: ctx.identity().id, now: ctx.now() });
      const out = { node: r.key.node, old: r.old, current: r.key.keyId, privateKey: r.key.path };
      if (opts.json) return io.json(out);
      io.out(`${out.current}${out.old ? ` (replaces ${out.old}, which stays published)` : ''}`);
    });
};
