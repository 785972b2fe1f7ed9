// The seam (issue 24 §3, seed 000): what a message for the person becomes at each outlet, and
// how each outlet's reply is proven to be the person's. The runner (run.ts) knows only Notice,
// send() and the Inbound checks below; nothing of the bus (routing, policy, the node model)
// knows an outlet exists.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DetachedSign } from '../bus/trust/index.js';
import { AttendError, EXIT, refusedError } from '../wire/errors.js';
import { webhookSigningBytes } from '../wire/sign.js';
import { neutralize } from '../wire/render.js';
import type { Outlet } from './config.js';

/** A message for the person, as every outlet is handed it: the body is data, never markup. */
export interface Notice {
  id: string;
  /** Why it is the person's: mail to them, a mention on a shared scope, urgent. */
  why: 'direct' | 'mention' | 'urgent' | 'held';
  scope: string;
  from: string;
  fromId: string;
  to: string;
  re: string | null;
  urgency: string | null;
  time: string;
  sig: string | null;
  body: string;
}

/**
 * The outlet said no, or could not be reached, or did not answer: tried again later. `sure`
 * when it surely did not take the request (it answered no, or no connection was made); a
 * timeout or a connection lost mid-request may have been shown, and its next try is marked.
 */
export class OutletError extends Error {
  constructor(
    message: string,
    readonly sure: boolean,
  ) {
    super(message);
  }
}

/** Errors that mean the request never left: no connection was made. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export interface Sent {
  /** The outlet's own reference for what it shows (a Telegram message_id). */
  ref?: string;
}

const TIMEOUT_MS = 10_000;

async function post(url: string, init: { headers: Record<string, string>; body: string }): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: init.headers, body: init.body, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    const code = err.cause?.code ?? err.name;
    throw new OutletError(`unreachable: ${code}`, NOT_CONNECTED.has(code));
  }
  if (!res.ok) {
    await res.body?.cancel();
    // A gateway's timeout says nothing of whether the service behind it took the request.
    throw new OutletError(`HTTP ${res.status}`, res.status !== 504);
  }
  return res;
}

/** HMAC-SHA256, hex, of `${timestamp}.${body}`: the generic webhook's signature both ways. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Slack's v0 request signature (api.slack.com/authentication/verifying-requests-from-slack). */
export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

/** What send() is told of this try. */
export interface SendOptions {
  /** An earlier try may have been shown (ledger.begin): the outlet is told, or the text says so. */
  mayRepeat?: boolean;
  /** The person's key (webhook): the body is signed with it too, for a receiver with the public key only. */
  sign?: DetachedSign;
}

export const MAY_REPEAT = '(may repeat) ';

/** The text a plain-text outlet shows: one header line, the body with control characters made visible. */
function plainText(n: Notice, footer: string, opts: SendOptions): string {
  const lead = `${opts.mayRepeat ? MAY_REPEAT : ''}${n.urgency === 'urgent' ? 'URGENT ' : ''}`;
  return `${lead}${neutralize(n.from)} → ${neutralize(n.to || n.scope)} (${neutralize(n.scope)}, sig=${n.sig ?? 'none'})\n${neutralize(n.body, { multiline: true })}\n\n${footer}`;
}

/** Slack reads <…> and &-entities as markup in any text: escaped, the body stays words. */
const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function send(o: Outlet, n: Notice, now: number, opts: SendOptions = {}): Promise<Sent> {
  switch (o.kind) {
    case 'webhook': {
      const body = JSON.stringify({ type: 'attend.message', message: n, ...(opts.mayRepeat ? { mayRepeat: true } : {}) });
      const ts = String(Math.floor(now / 1000));
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-attend-timestamp': ts, 'x-attend-signature': webhookSignature(o.secret, ts, body), 'idempotency-key': n.id };
      if (opts.sign) {
        const s = opts.sign(webhookSigningBytes(ts, body));
        headers['x-attend-ed25519'] = `keyid=${s.keyId}, sig=${s.sig}`;
      }
      await post(o.url, { headers, body });
      return {};
    }
    case 'ntfy': {
      // Published as JSON to the server's root, so nothing of the message rides in a header
      // (the sequence id is the message id, [0-9a-z-]). The sequence id makes a repeat replace
      // the notification it repeats (ntfy 2.16 and later, in the clients that support it).
      const u = new URL(o.url);
      const topic = u.pathname.split('/').filter(Boolean).pop() ?? '';
      const base = `${u.origin}${u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1)}`;
      const body = JSON.stringify({
        topic,
        title: `attend: ${neutralize(n.from)}`,
        message: plainText(n, `id ${n.id}`, opts),
        priority: n.urgency === 'urgent' ? 5 : 3,
        tags: [n.why],
        sequence_id: n.id,
      });
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-sequence-id': n.id, 'idempotency-key': n.id };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      await post(base, { headers, body });
      return {};
    }
    case 'slack': {
      const text = slackEscape(plainText(n, `reply: /attend ${n.id} <your answer>`, opts));
      await post(o.url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, mrkdwn: false, unfurl_links: false, unfurl_media: false }) });
      return {};
    }
    case 'telegram': {
      // No parse_mode: Telegram shows the text as it is, nothing in it is formatting.
      const body = JSON.stringify({ chat_id: o.chatId, text: plainText(n, `id ${n.id} (reply to this message to answer)`, opts).slice(0, 4096), link_preview_options: { is_disabled: true } });
      const res = await post(`${o.api.replace(/\/$/, '')}/bot${o.token}/sendMessage`, { headers: { 'content-type': 'application/json' }, body });
      const r = (await res.json().catch(() => null)) as { ok?: boolean; result?: { message_id?: number } } | null;
      // ok:false is Telegram's no; an answer that is not JSON (cut short) says nothing either way.
      if (!r?.ok) throw new OutletError('Telegram answered without ok', r?.ok === false);
      return r.result?.message_id !== undefined ? { ref: String(r.result.message_id) } : {};
    }
  }
}

/** Constant-time string equality (a signature or token), false on any length difference. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A signed request is good only this long (s) after its timestamp: a replay later is refused. */
export const MAX_SKEW_S = 300;

export function freshTimestamp(ts: string | undefined, now: number): boolean {
  if (ts === undefined || !/^\d{1,12}$/.test(ts)) return false;
  return Math.abs(now / 1000 - Number(ts)) <= MAX_SKEW_S;
}

/** The route a Telegram outlet's updates come to, under the public URL the person gives. */
export function telegramHookUrl(publicUrl: string, outletName: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/telegram/${outletName}`;
}

/**
 * One Bot API call about the bot's webhook. Telegram's own answer is checked: ok:false, or no
 * answer, throws with Telegram's description (never the bot token, which is in the path).
 */
async function webhookCall(o: Extract<Outlet, { kind: 'telegram' }>, method: 'setWebhook' | 'deleteWebhook', body: object, unreached: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${o.api.replace(/\/$/, '')}/bot${o.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    throw new AttendError(`the Telegram Bot API at ${o.api} could not be reached (${err.cause?.code ?? err.name}); ${unreached}`, EXIT.environment);
  }
  // Telegram answers JSON with ok and, on a refusal, a description, whatever the HTTP status.
  const r = (await res.json().catch(() => null)) as { ok?: unknown; description?: unknown } | null;
  if (r?.ok === true) return;
  const why = typeof r?.description === 'string' ? neutralize(r.description).slice(0, 300) : `HTTP ${res.status}, no answer from the Bot API`;
  throw refusedError(`Telegram refused ${method}: ${why}`, method === 'setWebhook' ? 'check the bot token and that the URL is public HTTPS on port 443, 80, 88 or 8443' : 'check the bot token');
}

/** Register the bot's webhook (Bot API setWebhook): updates of kind `message` only, to `url`, each carrying the outlet's secret_token. */
export function setTelegramWebhook(o: Extract<Outlet, { kind: 'telegram' }>, url: string): Promise<void> {
  return webhookCall(o, 'setWebhook', { url, secret_token: o.secretToken, allowed_updates: ['message'] }, 'no webhook was set');
}

/** Unregister it (Bot API deleteWebhook), for an outlet that is removed. */
export function deleteTelegramWebhook(o: Extract<Outlet, { kind: 'telegram' }>): Promise<void> {
  return webhookCall(o, 'deleteWebhook', {}, 'the webhook is still set');
}
