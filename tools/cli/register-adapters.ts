// CLI wiring for `attend adapter` (issue 24 §3): outlets that reach the person's phone.
// Everything of tools/adapters loads lazily (Fastify only for `run`), so no other verb pays.

import type { Command } from 'commander';
import { createVerbCtx } from '../verbs/context.js';
import { AttendError, notFoundError, usageError } from '../wire/errors.js';
import { neutralize } from '../wire/render.js';
import { type Registrar, examples } from './registrar.js';
import type { Ctx } from './context.js';

interface AddFlags {
  url?: string;
  secret?: string;
  signingSecret?: string;
  token?: string;
  chatId?: string;
  secretToken?: string;
  api?: string;
  slackUser?: string;
  json?: boolean;
}

/** The person's own context: every adapter verb refuses, exit 4, unless this process is the person. */
const asPerson = (ctx: Ctx) => createVerbCtx({ env: ctx.env, cwd: ctx.cwd, pid: ctx.pid, now: ctx.now, identity: 'human' });

export const registerAdapters: Registrar = (program: Command, ctx, io) => {
  const adapter = program
    .command('adapter')
    .description("reach the person's phone: forward their direct messages, mentions and urgent messages to outlets (webhook, ntfy, Slack, Telegram), and write replies back")
    .addHelpText(
      'after',
      examples([
        'attend adapter add webhook phone --url https://example.net/hook',
        'attend adapter add ntfy ntfy --url https://ntfy.sh/my-secret-topic',
        'attend adapter add slack slack --url https://hooks.slack.com/services/T/B/X --signing-secret "$SLACK_SIGNING_SECRET" --slack-user U0123ABC',
        'attend adapter add telegram tg --token "$BOT_TOKEN" --chat-id 12345678',
        'attend adapter hook tg --url https://attend.example.net',
        'attend adapter listen --port 8787',
        'attend adapter run',
        'attend adapter status',
      ]) + '\nSee docs/adapters.md.\n',
    );

  adapter
    .command('add')
    .description('add an outlet (webhook, ntfy, slack, telegram); secrets it makes are printed once')
    .argument('<kind>', 'webhook, ntfy, slack or telegram')
    .argument('<name>', 'the outlet\'s name, [a-z0-9-]{1,32}')
    .option('--url <url>', 'webhook: where messages are POSTed; ntfy: the topic URL; slack: the incoming webhook URL')
    .option('--secret <secret>', 'webhook: the HMAC secret both ways (default: a new one, printed once)')
    .option('--signing-secret <secret>', "slack: the app's signing secret (verifies the slash command's replies)")
    .option('--slack-user <id>', "slack: the person's member id (U…): only their slash commands are taken")
    .option('--token <token>', 'telegram: the bot token; ntfy: an access token (optional)')
    .option('--chat-id <id>', "telegram: the person's chat with the bot")
    .option('--secret-token <token>', "telegram: the webhook's secret_token (default: a new one, printed once)")
    .option('--api <url>', 'telegram: the Bot API server (default https://api.telegram.org)')
    .option('--json', 'print JSON')
    .action(async (kind: string, name: string, opts: AddFlags) => {
      const { OUTLET_KINDS, addOutlet, newSecret } = await import('../adapters/config.js');
      if (!(OUTLET_KINDS as readonly string[]).includes(kind)) throw usageError(`unknown outlet kind '${neutralize(kind)}': one of ${OUTLET_KINDS.join(', ')}`);
      const p = asPerson(ctx);
      p.identity();
      const made: Record<string, string> = {};
      const input: Record<string, unknown> = { kind, name };
      if (kind === 'webhook') input.secret = opts.secret ?? (made.secret = newSecret());
      if (kind === 'slack') {
        input.signingSecret = opts.signingSecret;
        input.userId = opts.slackUser;
      }
      if (kind === 'telegram') {
        input.chatId = opts.chatId;
        input.secretToken = opts.secretToken ?? (made.secretToken = newSecret());
        if (opts.api) input.api = opts.api;
      }
      if (kind !== 'telegram') input.url = opts.url;
      if (opts.token !== undefined) input.token = opts.token;
      const { outlet, file } = addOutlet(p.root(), input, ctx.now());
      if (opts.json) return io.json({ name: outlet.name, kind: outlet.kind, file, ...made });
      io.out(`added ${outlet.kind} outlet ${outlet.name} to ${file}`);
      for (const [k, v] of Object.entries(made)) io.out(`${k}: ${v}   (shown once; it is kept in ${file}, mode 0600)`);
      if (outlet.kind !== 'ntfy') io.out(`replies: POST to the listener's /${outlet.kind === 'webhook' ? 'in' : outlet.kind}/${outlet.name} (attend adapter run prints its address)`);
      if (outlet.kind === 'telegram') io.out(`then: attend adapter hook ${outlet.name} --url https://<the public address of the listener>`);
    });

  adapter
    .command('hook')
    .description("tell Telegram where the bot's updates go (Bot API setWebhook): <url>/telegram/<name>, with the outlet's secret_token, message updates only")
    .argument('<name>', 'a telegram outlet')
    .option('--url <url>', 'the public https:// address that reaches the listener (a tunnel or TLS proxy in front of it)')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { url?: string; json?: boolean }) => {
      let base: URL | undefined;
      try {
        base = opts.url === undefined ? undefined : new URL(opts.url);
      } catch {
        // Refused below.
      }
      if (base?.protocol !== 'https:' || base.search !== '' || base.hash !== '') throw usageError('--url takes the public https:// address of the listener (no query), e.g. --url https://attend.example.net');
      const { readConfig, setTelegramHook } = await import('../adapters/config.js');
      const { setTelegramWebhook, telegramHookUrl } = await import('../adapters/outlets.js');
      const p = asPerson(ctx);
      p.identity();
      const o = readConfig(p.root()).outlets.find((x) => x.name === name);
      if (!o) throw notFoundError(`no outlet named ${neutralize(name)}`);
      const at = base.href.replace(/\/+$/, '');
      if (o.kind === 'slack') throw usageError(`Slack has no API for this: set the slash command's Request URL to ${at}/slack/${o.name} in the app's settings`);
      if (o.kind !== 'telegram') throw usageError(`only a telegram outlet registers a webhook (${o.name} is ${o.kind}${o.kind === 'webhook' ? `; its replies POST to ${at}/in/${o.name}` : ', outbound only'})`);
      const hook = telegramHookUrl(at, o.name);
      await setTelegramWebhook(o, hook);
      const file = setTelegramHook(p.root(), o.name, hook);
      if (opts.json) return io.json({ name: o.name, hook, file });
      io.out(`Telegram sends ${o.name}'s updates to ${hook} (message updates only, with its secret_token); recorded in ${file}`);
    });

  adapter
    .command('list')
    .description('the configured outlets (secrets never shown)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { readConfig, redacted } = await import('../adapters/config.js');
      const cfg = readConfig(asPerson(ctx).root());
      const rows = cfg.outlets.map(redacted);
      if (opts.json) return io.json({ listen: cfg.listen, outlets: rows });
      if (rows.length === 0) return io.out('no outlets (attend adapter add)');
      for (const r of rows) io.out(`${String(r.name).padEnd(16)} ${String(r.kind).padEnd(9)} ${neutralize(String(r.where))}${r.inbound ? '' : '  (outbound only)'}${r.hook === null ? '  (no webhook yet: attend adapter hook)' : r.hook ? `  hook ${neutralize(String(r.hook))}` : ''}`);
      io.out(`listen: ${cfg.listen.host}:${cfg.listen.port === 0 ? '(a free port)' : cfg.listen.port}`);
    });

  adapter
    .command('remove')
    .description("remove an outlet (its ledger stays until cleanup); a Telegram outlet's webhook is deleted first (Bot API deleteWebhook)")
    .argument('<name>')
    .option('--keep-hook', "remove it here even when Telegram cannot be told (its webhook stays set; updates sent to it are refused)")
    .action(async (name: string, opts: { keepHook?: boolean }) => {
      const { readConfig, removeOutlet } = await import('../adapters/config.js');
      const p = asPerson(ctx);
      p.identity();
      const o = readConfig(p.root()).outlets.find((x) => x.name === name);
      // Telegram would go on sending the bot's updates to a listener that no longer knows the
      // outlet: told first, and a refusal or no answer keeps the outlet (and its token) here.
      if (o?.kind === 'telegram' && o.hook !== undefined && !opts.keepHook) {
        const { deleteTelegramWebhook } = await import('../adapters/outlets.js');
        try {
          await deleteTelegramWebhook(o);
        } catch (err) {
          if (err instanceof AttendError) throw new AttendError(`${err.message}; ${o.name} is not removed`, err.exitCode, `try again, or attend adapter remove ${o.name} --keep-hook to remove it here only`);
          throw err;
        }
      }
      const file = removeOutlet(p.root(), name);
      io.out(`removed ${neutralize(name)} from ${file}${o?.kind === 'telegram' && o.hook !== undefined ? (opts.keepHook ? ` (its webhook ${neutralize(o.hook)} is still set at Telegram)` : ' (its webhook deleted at Telegram)') : ''}`);
    });

  adapter
    .command('listen')
    .description('where the reply listener binds (127.0.0.1 unless a TLS proxy is in front)')
    .option('--host <host>', 'the address', '127.0.0.1')
    .option('--port <port>', 'the port (0: a free one)', '0')
    .action(async (opts: { host: string; port: string }) => {
      if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw usageError('--port takes 0 to 65535');
      const { setListen } = await import('../adapters/config.js');
      const p = asPerson(ctx);
      p.identity();
      io.out(`wrote ${setListen(p.root(), opts.host, Number(opts.port))}`);
    });

  adapter
    .command('run')
    .description('forward and take replies until stopped (SIGTERM/SIGINT); prints the listener\'s address')
    .option('--poll-ms <ms>', 'the longest wait between two walks of the inbox (a change on the bus wakes it at once)', '5000')
    .action(async (opts: { pollMs: string }) => {
      if (!/^\d+$/.test(opts.pollMs) || Number(opts.pollMs) < 10) throw usageError('--poll-ms takes whole milliseconds, at least 10');
      const { adapterRun } = await import('../adapters/run.js');
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      await adapterRun({
        makeCtx: () => asPerson(ctx),
        log: (l) => io.err(l),
        pollMs: Number(opts.pollMs),
        signal: stop.signal,
        listening: (url) => io.out(`listening on ${url}`),
      });
    });

  adapter
    .command('status')
    .description('per outlet: delivered, what waits and why, the next try')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { adapterHealth } = await import('../adapters/health.js');
      const { processAlive } = await import('../identity/system.js');
      const h = adapterHealth(ctx.root(), ctx.now(), (pid) => processAlive(pid, undefined, ctx.procInfo));
      if (opts.json) return io.json(h);
      io.out(h.lines.join('\n') || 'no adapter has run here (attend adapter run)');
    });
};
