// The adapters' settings (issue 24 §3): which outlets reach the person's phone, and where the
// inbound listener answers. One file, adapters/config.json in the person's private directory
// of the bus (tools/bus/trust/private.ts: in the key directory, never the bus root, which
// every session can write), mode 0600 in a 0700 directory (it holds the outlets' secrets),
// checked by one zod schema on every read. The outlets' ledgers and the runner's lock are
// beside it (ledger.ts): an outlet is an inbound route whose replies are signed with the
// person's key, so what defines one must be out of a worker's reach like the key itself.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { FILE_MODE, writeFileAtomic } from '../bus/store/index.js';
import { openPrivateDir, privatePath } from '../bus/trust/index.js';
import { busError, notFoundError, usageError } from '../wire/errors.js';

export const OUTLET_KINDS = ['webhook', 'ntfy', 'slack', 'telegram'] as const;

const name = z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'an outlet name is [a-z0-9-], 1 to 32 characters');
const url = z.string().url().refine((u) => /^https?:\/\//.test(u), 'an http:// or https:// URL');
const secret = z.string().min(16, 'a secret of at least 16 characters');

const common = {
  name,
  /** Messages older than this (ms) are never forwarded: an outlet added today does not replay history. */
  since: z.number().int().nonnegative(),
};

export const outletSchema = z.discriminatedUnion('kind', [
  // A generic JSON webhook: each message POSTed, signed with HMAC-SHA256 of the secret; the
  // same secret signs the replies it sends back to /in/<name>.
  z.object({ ...common, kind: z.literal('webhook'), url, secret }),
  // ntfy (https://ntfy.sh or a self-hosted server): a topic URL; outbound only.
  z.object({ ...common, kind: z.literal('ntfy'), url, token: z.string().min(1).optional() }),
  // A Slack incoming webhook out; replies come back as a slash command signed with the app's
  // signing secret (Slack's v0 HMAC scheme), and only from the person's own Slack member id
  // (anyone in the workspace can run the command).
  z.object({ ...common, kind: z.literal('slack'), url, signingSecret: secret, userId: z.string().regex(/^[UW][A-Z0-9]{2,20}$/, "the person's Slack member id (U…)") }),
  // The Telegram Bot API: sendMessage to one chat; replies come back through the bot's
  // webhook, which carries the secret_token it was set with.
  z.object({
    ...common,
    kind: z.literal('telegram'),
    token: z.string().regex(/^\d+:[A-Za-z0-9_-]{20,}$/, 'a bot token as BotFather gives it (123456:ABC…)'),
    chatId: z.string().regex(/^-?\d{1,20}$/, 'a numeric chat id'),
    secretToken: z.string().regex(/^[A-Za-z0-9_-]{16,256}$/, 'a secret_token of 16 to 256 characters [A-Za-z0-9_-]'),
    api: url.default('https://api.telegram.org'),
    /** Where Telegram was told to send updates (`attend adapter hook`), once it said ok. */
    hook: z.string().url().refine((u) => u.startsWith('https://'), 'an https:// URL').optional(),
  }),
]);
export type Outlet = z.infer<typeof outletSchema>;

export const configSchema = z.object({
  version: z.literal(1),
  /** Where the inbound listener binds: loopback unless a TLS-terminating proxy is in front. */
  listen: z.object({ host: z.string().default('127.0.0.1'), port: z.number().int().min(0).max(65535).default(0) }).default({ host: '127.0.0.1', port: 0 }),
  outlets: z.array(outletSchema),
});
export type AdapterConfig = z.infer<typeof configSchema>;

/** The adapters' directory: refused (exit 5) when the key directory is open to others. */
export const adaptersDir = (root: string) => privatePath(root, 'adapters');
export const configFile = (root: string) => join(adaptersDir(root), 'config.json');

export function readConfig(root: string): AdapterConfig {
  const file = configFile(root);
  if (!existsSync(file)) return { version: 1, listen: { host: '127.0.0.1', port: 0 }, outlets: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw busError(`${file} is not JSON (${(e as Error).message})`, 'fix it, or remove it and add the outlets again');
  }
  const r = configSchema.safeParse(raw);
  if (!r.success) throw busError(`${file}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, 'fix it, or remove it and add the outlets again');
  const names = new Set<string>();
  for (const o of r.data.outlets) {
    if (names.has(o.name)) throw busError(`${file}: outlet ${o.name} is named twice`);
    names.add(o.name);
  }
  return r.data;
}

export function writeConfig(root: string, cfg: AdapterConfig): string {
  const checked = configSchema.parse(cfg);
  const file = join(openPrivateDir(root, 'adapters'), 'config.json');
  writeFileAtomic(file, `${JSON.stringify(checked, null, 2)}\n`, { sync: true });
  chmodSync(file, FILE_MODE);
  return file;
}

/** Add an outlet from the CLI's flags; a bad one is a one-line usage error and nothing is written. */
export function addOutlet(root: string, input: Record<string, unknown>, now: number): { outlet: Outlet; file: string } {
  const cfg = readConfig(root);
  const r = outletSchema.safeParse({ since: now, ...input });
  if (!r.success) throw usageError(`outlet: ${r.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}`);
  if (cfg.outlets.some((o) => o.name === r.data.name)) throw usageError(`an outlet named ${r.data.name} exists; remove it first`);
  cfg.outlets.push(r.data);
  return { outlet: r.data, file: writeConfig(root, cfg) };
}

export function removeOutlet(root: string, outletName: string): string {
  const cfg = readConfig(root);
  const next = cfg.outlets.filter((o) => o.name !== outletName);
  if (next.length === cfg.outlets.length) throw notFoundError(`no outlet named ${outletName}`);
  return writeConfig(root, { ...cfg, outlets: next });
}

/** Record where a Telegram outlet's webhook points, once Telegram took it. */
export function setTelegramHook(root: string, outletName: string, hook: string): string {
  const cfg = readConfig(root);
  const o = cfg.outlets.find((x) => x.name === outletName);
  if (!o || o.kind !== 'telegram') throw notFoundError(`no Telegram outlet named ${outletName}`);
  o.hook = hook;
  return writeConfig(root, cfg);
}

export function setListen(root: string, host: string, port: number): string {
  const cfg = readConfig(root);
  return writeConfig(root, { ...cfg, listen: { host, port } });
}

/** A fresh secret for an outlet that signs (printed once by `attend adapter add`). */
export const newSecret = () => randomBytes(24).toString('base64url');

/** What `list` prints: secrets never shown. */
export function redacted(o: Outlet): Record<string, unknown> {
  const { name: n, kind, since } = o;
  const where = o.kind === 'telegram' ? `chat ${o.chatId} via ${o.api}` : o.url;
  return { name: n, kind, since: new Date(since).toISOString(), where, inbound: o.kind !== 'ntfy', ...(o.kind === 'telegram' ? { hook: o.hook ?? null } : {}) };
}
