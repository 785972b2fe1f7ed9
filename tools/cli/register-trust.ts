// CLI wiring for trust (issue 14): keys, grants and denies, the policy's settings,
// delegations, lineage and cards. The use cases are verbs (tools/verbs/trust/), which chat and
// MCP can call as well; this file only parses flags into their input, calls them and prints.

import type { Command } from 'commander';
import { type Registrar, examples } from './registrar.js';
import type { Ctx } from './context.js';
import type { Io } from './io.js';
import { neutralize } from '../wire/render.js';
import { VERSION } from './version.js';
import { FAMILY_POLICY_COMMAND } from '../wire/permit.js';

/** A verb's input field as this front end names it: an argument (`<from>`) or a flag (`--max-depth`). */
function flagFor(args: Record<string, string> = {}): (path: string) => string {
  return (path) => args[path] ?? `--${path.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

export const registerTrust: Registrar = (program, ctx, io) => {
  const keys = program
    .command('keys')
    .description("show this node's signing key and the key ids readers verify it by")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend keys', 'attend keys --json', 'attend keys rotate']))
    .action(async (opts: { json?: boolean }) => {
      const { runKeys } = await import('../verbs/trust/index.js');
      const r = runKeys(ctx, {});
      if (opts.json) return io.json(r);
      io.out(
        [
          `node:        ${r.node}`,
          `key:         ${r.current ?? '(none yet: created on the first message this node writes)'}`,
          `private key: ${r.privateKey}`,
          `record:      ${r.record}`,
          ...(r.published.length > 0
            ? ['keys:', ...r.published.map((k) => `  ${k.keyId}  ${k.created}${k.current ? '  (current)' : ''}${k.newIdentitySince !== undefined ? `  (a new identity since ${k.newIdentitySince})` : ''}`)]
            : ['keys:        (none)']),
          ...(r.problem !== undefined ? [`problem:     ${neutralize(r.problem)}`] : []),
        ].join('\n'),
      );
    });
  keys
    .command('rotate')
    .description('make a new signing key, signed by the old one in the key record, so old signatures still verify')
    .option('--json', 'print JSON')
    // `keys` has --json too and commander gives a flag to the parent first: read both.
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ json?: boolean }>();
      const { runRotateKey } = await import('../verbs/trust/index.js');
      const r = runRotateKey(ctx, {});
      if (opts.json) return io.json(r);
      io.out(`${r.current}${r.old ? ` (replaces ${r.old}, which stays in the record)` : ''}`);
    });

  program
    .command('card')
    .description('A2A AgentCards: check one a node signed')
    .command('verify')
    .description("check a signed AgentCard by the key it carries, without this bus's key lists (exit 0 verified, 4 it does not verify, 2 not JSON, 1 no such file)")
    .argument('<file>', "the card (JSON, as attend whoami --card prints it); '-' reads it from stdin")
    .option('--id <node>', 'fail unless the card is for this node id')
    .option('--key <key-id>', 'fail unless the card is signed by this key id (one you pinned earlier)')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', examples(['attend whoami --card > me.json', 'attend card verify me.json', 'attend whoami --card | attend card verify -', 'attend card verify card.json --id 9a1f… --key U…']))
    .action(async (file: string, opts: { id?: string; key?: string; json?: boolean }) => {
      const { runVerifyCard } = await import('../verbs/trust/index.js');
      const { readCardText } = await import('./card-input.js');
      const r = await runVerifyCard(ctx, { text: await readCardText(ctx, file), ...(opts.id !== undefined ? { id: opts.id } : {}), ...(opts.key !== undefined ? { key: opts.key } : {}) });
      if (opts.json) {
        io.json(r);
        if (!r.ok) io.setExitCode((await import('../wire/errors.js')).EXIT.refused);
        return;
      }
      if (!r.ok) throw (await import('../wire/errors.js')).refusedError(`the card does not verify: ${r.reason}`);
      io.out(`verified: ${neutralize(r.name)} (${r.node}), signed by its key ${r.keyId}`);
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
      .addHelpText('after', examples([`attend ${verb} codex-api claude-web`, `attend ${verb} codex-api claude-web --both`, `attend ${verb} worker-1 '#open'`, `attend ${verb} worker-1 lead --channel ops`]))
      .action(async (from: string, to: string, opts: { both?: boolean; channel?: string; json?: boolean }) => {
        const trust = await import('../verbs/trust/index.js');
        const { parseInput } = await import('../verbs/input.js');
        const input = parseInput(trust.grantInput, { from, to, both: opts.both, channel: opts.channel }, flagFor({ from: '<from>', to: '<to>' }));
        const r = verb === 'allow' ? trust.runAllow(ctx, input) : trust.runDeny(ctx, input);
        if (opts.json) return io.json(r.policy);
        io.out(`${verb === 'allow' ? 'allowed' : 'denied'}: ${r.from} → ${r.to}${r.both ? ' (both ways)' : ''}${r.channel !== null ? ` in #${r.channel}` : ''} (${r.file})`);
      });
  grantCommand('allow', 'let one node send to another across groups (only the human who owns the bus)');
  grantCommand('deny', 'take a grant back and refuse that sender → recipient, even inside a group (only the human who owns the bus)');

  program
    .command('grants')
    .description('show the policy: mode, who posts to #open, grants and denies')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend grants', 'attend grants --json']))
    .action(async (opts: { json?: boolean }) => {
      const { runGrants } = await import('../verbs/trust/index.js');
      const r = runGrants(ctx, {});
      if (opts.json) return io.json({ file: r.file, exists: r.exists, ...r.policy });
      const p = r.policy;
      const g = (x: { from: string; to: string; channel?: string | undefined }) => `  ${x.from} → ${x.to}${x.channel ? ` (in #${x.channel})` : ''}`;
      io.out(
        [
          `policy: ${r.file}${r.exists ? '' : ` (none yet: the default; ${FAMILY_POLICY_COMMAND} is what an older attend did)`}`,
          `mode:   ${p.mode}${p.mode === 'family' ? ' (every session and person of this bus talk; strangers are refused)' : ' (a parent and its children talk both ways; across groups only with a grant; a person reaches and is reached by all)'}`,
          `#open:  ${p.open} may post${p.open === 'top' ? ' (people and the sessions a person started; others with a grant to #open)' : ''}`,
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
    .addHelpText('after', examples(['attend delegate codex-api', 'attend delegate codex-api --ttl 30m --scope ops', 'attend delegate /srv/api --scope /srv/api']))
    .action(async (session: string, opts: { ttl: string; scope?: string[]; json?: boolean }) => {
      const { delegateInput, runDelegate } = await import('../verbs/trust/index.js');
      const { parseInput } = await import('../verbs/input.js');
      const input = parseInput(delegateInput, { session, ttl: opts.ttl, ...(opts.scope ? { scopes: opts.scope } : {}) }, flagFor({ session: '<session>', scopes: '--scope' }));
      const signed = runDelegate(ctx, input);
      if (opts.json) return io.json(signed);
      io.out(`${signed.delegate} may speak on behalf of ${signed.principal} in ${signed.scopes.join(', ')} until ${new Date(signed.expires).toISOString()}`);
    });

  program
    .command('policy')
    .description('change the policy settings: mode, who posts to #open, the depth limit (only the human who owns the bus)')
    .option('--mode <mode>', 'groups (the default: a parent and its children; grants across) or family (every node of the bus reaches every other)')
    .option('--open <who>', 'who posts to #open: everyone, family, top (the default: people and top-level sessions), humans or granted')
    .option('--max-depth <n>', 'the deepest lineage the policy allows')
    .option('--claims <mode>', "before an edit of a file another live party claims: warn (the default: tell the model), ask (ask the person) or deny (refuse the edit)")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend policy --mode family --open everyone', 'attend policy --open humans', 'attend policy --claims deny', 'attend grants']))
    .action(async (opts: { mode?: string; open?: string; maxDepth?: string; claims?: string; json?: boolean }) => {
      const { policyInput, runPolicy } = await import('../verbs/trust/index.js');
      const { parseInput } = await import('../verbs/input.js');
      const { usageError } = await import('../wire/errors.js');
      if (opts.maxDepth !== undefined && !/^\d+$/.test(opts.maxDepth)) throw usageError('--max-depth: a whole number');
      const input = parseInput(policyInput, { mode: opts.mode, open: opts.open, maxDepth: opts.maxDepth === undefined ? undefined : Number(opts.maxDepth), claims: opts.claims }, flagFor());
      const { file, policy: p } = runPolicy(ctx, input);
      if (opts.json) return io.json(p);
      io.out(`mode ${p.mode}, #open: ${p.open}, depth ${p.maxDepth}, claims: ${p.claims ?? 'warn'} (${file})`);
    });
};

/** `attend peers --tree` / `--cards` (registered with peers in register-channels.ts). */
export async function printPeersTrust(ctx: Ctx, io: Io, opts: { json?: boolean; tree?: boolean; cards?: boolean }): Promise<void> {
  const trust = await import('../verbs/trust/index.js');
  if (opts.cards) return io.json(await trust.runCards(ctx, { version: VERSION }));
  const r = trust.runTree(ctx, {});
  if (opts.json) return io.json({ tree: r.tree });
  const names = new Map(r.live.map((p) => [p.id, `${neutralize(p.name)} (${p.kind})`]));
  const lines: string[] = [];
  const walk = (n: { id: string; children: { id: string; children: unknown[] }[] }, prefix: string, last: boolean, top: boolean) => {
    // An ancestor that is not live is known only by the id its lineage file gave: data.
    const label = names.get(n.id) ?? `${neutralize(n.id)} (not live)`;
    lines.push(top ? label : `${prefix}${last ? '└─ ' : '├─ '}${label}`);
    const next = top ? '' : `${prefix}${last ? '   ' : '│  '}`;
    n.children.forEach((c, i) => walk(c as typeof n, next, i === n.children.length - 1, false));
  };
  for (const root of r.tree) walk(root, '', true, true);
  io.out(lines.length > 0 ? lines.join('\n') : 'Nobody is live on this bus.');
}

/** `attend whoami --card`. */
export async function printWhoamiCard(ctx: Ctx, io: Io): Promise<void> {
  const { runWhoamiCard } = await import('../verbs/trust/index.js');
  io.json(await runWhoamiCard(ctx, { version: VERSION }));
}
