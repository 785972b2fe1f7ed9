// CLI wiring for trust (issue 14): keys, and later grants and delegations. The logic lives
// in tools/bus (keys.ts, policy.ts); this file only parses and prints.

import type { Command } from 'commander';
import type { Registrar } from './registrar.js';
import type { Ctx } from './context.js';
import type { Io } from './io.js';
import { neutralize } from '../wire/render.js';
import { VERSION } from './version.js';

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
      const { describeKeys } = await import('../bus/trust/index.js');
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
      const { rotateKey } = await import('../bus/trust/index.js');
      const r = rotateKey({ keysDir: ctx.paths.keysDir, root: ctx.root(), node: ctx.identity().id, now: ctx.now() });
      const out = { node: r.key.node, old: r.old, current: r.key.keyId, privateKey: r.key.path };
      if (opts.json) return io.json(out);
      io.out(`${out.current}${out.old ? ` (replaces ${out.old}, which stays published)` : ''}`);
    });

  const grantCommand = (verb: 'allow' | 'deny', description: string) =>
    program
      .command(verb)
      .description(description)
      .argument('<from>', 'the sender: a live name, path or id, or an id as written')
      .argument('<to>', 'the recipient, or #channel / #open for posting there')
      .option('--both', 'both directions')
      .option('--channel <name>', 'only inside this channel')
      .option('--json', 'print the policy as JSON')
      .addHelpText('after', examples([`attend ${verb} Nick-alpha Tam-beta`, `attend ${verb} Nick-alpha Tam-beta --both`, `attend ${verb} worker-1 '#open'`, `attend ${verb} worker-1 lead --channel ops`]))
      .action(async (fromArg: string, toArg: string, opts: { both?: boolean; channel?: string; json?: boolean }) => {
        const { resolveTarget } = await import('../bus/presence/index.js');
        const policy = await import('../bus/trust/index.js');
        // A live name, path or id becomes its id; anything else is taken as an id as written.
        const liveId = (t: string): string | null => {
          try {
            const found = resolveTarget(t, ctx.live(), { cwd: ctx.cwd, home: ctx.paths.home });
            return found.length === 1 ? found[0]!.id : null;
          } catch {
            return null;
          }
        };
        const who = ctx.identity();
        policy.requireOwner(who);
        const from = policy.nodeArg(fromArg, liveId);
        const to = policy.nodeArg(toArg, liveId);
        const channel = opts.channel?.replace(/^#/, '');
        const p = policy[verb](ctx.root(), who, { from, to, both: opts.both, channel });
        if (opts.json) return io.json(p);
        io.out(`${verb === 'allow' ? 'allowed' : 'denied'}: ${from} → ${to}${opts.both ? ' (both ways)' : ''}${channel ? ` in #${channel}` : ''} (${policy.policyFile(ctx.root())})`);
      });
  grantCommand('allow', 'let one node send to another across groups (only the human who owns the bus)');
  grantCommand('deny', 'take a grant back and refuse that sender → recipient, even inside a group (only the human who owns the bus)');

  program
    .command('grants')
    .description('show the policy: mode, who posts to #open, grants and denies')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend grants', 'attend grants --json']))
    .action(async (opts: { json?: boolean }) => {
      const policy = await import('../bus/trust/index.js');
      const file = policy.policyFile(ctx.root());
      const r = policy.readPolicy(ctx.root());
      if (!r.ok) throw new (await import('../wire/errors.js')).AttendError(r.error, 3, `fix or remove ${file}`);
      if (opts.json) return io.json({ file, exists: r.exists, ...r.policy });
      const p = r.policy;
      const g = (x: { from: string; to: string; channel?: string | undefined }) => `  ${x.from} → ${x.to}${x.channel ? ` (in #${x.channel})` : ''}`;
      io.out(
        [
          `policy: ${file}${r.exists ? '' : ' (none yet: the default)'}`,
          `mode:   ${p.mode}${p.mode === 'family' ? " (every session and person of this bus talk; strangers are refused)" : ' (inside a group both ways; across groups only with a grant)'}`,
          `#open:  ${p.open} may post`,
          `depth:  ${p.maxDepth}`,
          `allow:${p.allow.length === 0 ? ' (none)' : ''}`,
          ...p.allow.map(g),
          `deny:${p.deny.length === 0 ? ' (none)' : ''}`,
          ...p.deny.map(g),
        ].join('\n'),
      );
    });

  program
    .command('delegate')
    .description('as the human, let a session speak on your behalf: its on_behalf_of shows (verified) while this covers it')
    .argument('<session>', 'a live name, path or session id')
    .option('--ttl <duration>', 'how long it holds: 30m, 2h, 1d', '2h')
    .option('--scope <scope>', 'where it holds: *, #channel or an absolute path (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend delegate Nick-alpha', 'attend delegate Nick-alpha --ttl 30m --scope ops', 'attend delegate /srv/api --scope /srv/api']))
    .action(async (target: string, opts: { ttl: string; scope?: string[]; json?: boolean }) => {
      const d = await import('../bus/trust/index.js');
      const { resolveTarget } = await import('../bus/presence/index.js');
      const who = ctx.identity();
      const ttlMs = d.parseTtl(opts.ttl);
      const scopes = (opts.scope ?? ['*']).map(d.parseScope);
      if (who.kind !== 'human') throw (await import('../wire/errors.js')).refusedError(`only a person delegates; ${who.id} is a session`, 'ask the person at the terminal to run it');
      const found = resolveTarget(target, ctx.live(), { cwd: ctx.cwd, home: ctx.paths.home });
      if (found.length !== 1) throw (await import('../wire/errors.js')).usageError(`'${target.slice(0, 40)}' names ${found.length} sessions; use a session id`);
      const signed = d.delegate({ root: ctx.root(), keysDir: ctx.paths.keysDir, principal: who, delegate: found[0]!.id, scopes, now: ctx.now(), ttlMs });
      if (opts.json) return io.json(signed);
      io.out(`${found[0]!.id} may speak on behalf of ${who.id} in ${scopes.join(', ')} until ${new Date(signed.expires).toISOString()}`);
    });

  program
    .command('policy')
    .description('change the policy settings: mode, who posts to #open, the depth limit (only the human who owns the bus)')
    .option('--mode <mode>', 'family (default: one person\'s sessions all talk) or groups (parent and children; grants across)')
    .option('--open <who>', 'who posts to #open: everyone, family, humans or granted')
    .option('--max-depth <n>', 'the deepest lineage the policy allows')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend policy --mode groups', 'attend policy --open humans', 'attend grants']))
    .action(async (opts: { mode?: string; open?: string; maxDepth?: string; json?: boolean }) => {
      const policy = await import('../bus/trust/index.js');
      const { usageError } = await import('../wire/errors.js');
      if (opts.mode !== undefined && opts.mode !== 'family' && opts.mode !== 'groups') throw usageError(`--mode takes family or groups, not '${opts.mode.slice(0, 20)}'`);
      if (opts.open !== undefined && !['everyone', 'family', 'humans', 'granted'].includes(opts.open)) throw usageError(`--open takes everyone, family, humans or granted, not '${opts.open.slice(0, 20)}'`);
      if (opts.maxDepth !== undefined && !/^\d+$/.test(opts.maxDepth)) throw usageError('--max-depth takes a whole number');
      const p = policy.updatePolicy(ctx.root(), ctx.identity(), (p) => {
        if (opts.mode !== undefined) p.mode = opts.mode as 'family' | 'groups';
        if (opts.open !== undefined) p.open = opts.open as 'everyone';
        if (opts.maxDepth !== undefined) p.maxDepth = Number(opts.maxDepth);
      });
      if (opts.json) return io.json(p);
      io.out(`mode ${p.mode}, #open: ${p.open}, depth ${p.maxDepth} (${policy.policyFile(ctx.root())})`);
    });
};

/** `attend peers --tree` / `--cards` (registered with peers in register-channels.ts). */
export async function runPeersTrust(ctx: Ctx, io: Io, opts: { json?: boolean; tree?: boolean; cards?: boolean }): Promise<void> {
  const { lineageForest } = await import('../bus/trust/index.js');
  const live = ctx.live();
  const names = new Map(live.map((p) => [p.id, `${neutralize(p.name)} (${p.kind})`]));
  if (opts.cards) {
    const { cardFor } = await import('../bus/trust/index.js');
    return io.json(live.map((p) => cardFor(ctx.root(), { id: p.id, kind: p.kind, name: p.name, origin: p.origin, claude: p.record !== undefined }, VERSION)));
  }
  const forest = lineageForest(ctx.root(), live.map((p) => p.id));
  if (opts.json) return io.json({ tree: forest });
  const lines: string[] = [];
  const walk = (n: { id: string; children: { id: string; children: unknown[] }[] }, prefix: string, last: boolean, top: boolean) => {
    const label = names.get(n.id) ?? `${n.id} (not live)`;
    lines.push(top ? label : `${prefix}${last ? '└─ ' : '├─ '}${label}`);
    const next = top ? '' : `${prefix}${last ? '   ' : '│  '}`;
    n.children.forEach((c, i) => walk(c as typeof n, next, i === n.children.length - 1, false));
  };
  for (const r of forest) walk(r, '', true, true);
  io.out(lines.length > 0 ? lines.join('\n') : 'Nobody is live on this bus.');
}

/** `attend whoami --card`. */
export async function runWhoamiCard(ctx: Ctx, io: Io): Promise<void> {
  const { cardFor } = await import('../bus/trust/index.js');
  const { runWhoami } = await import('../verbs/whoami.js');
  const r = runWhoami(ctx);
  io.json(cardFor(ctx.root(), { id: r.id, kind: r.kind, name: r.displayName, origin: r.origin, claude: r.sessionId !== null }, VERSION));
}
