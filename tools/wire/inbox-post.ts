// What the deliverer posts to a Claude Code session's inbox socket (issue 21 §2;
// ../shared/claude-code.md, "Delivery paths: the inbox socket"): one post per wake, its text
// the wake's items in Claude Code's own `<cross-session-message from=… from-name=…>`
// envelope, one envelope per message (its sender named) and one for attend's own lines
// (notes, the digest, the teaching line). The lines inside are the sensor's observation lines,
// so markup in a body is already defused and cannot close the envelope.

import type { NameLookup } from './display.js';
import { neutralize } from './render.js';
import type { WakeItem } from './wake.js';

/** The JSON line a post carries (one line, newline-terminated on the wire). */
export interface InboxPost {
  type: 'user';
  message: { role: 'user'; content: string };
  from: string;
  msg_id: string;
  priority: 'now' | 'next' | 'later';
}

function attr(text: string): string {
  return neutralize(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function envelope(from: string, name: string, lines: string[]): string {
  return `<cross-session-message from="${attr(from)}" from-name="${attr(name)}">\n${lines.join('\n')}\n</cross-session-message>`;
}

/**
 * The text of one post: every line of the wake in one envelope, named for its senders. One
 * envelope, because Claude Code keeps a post's first opening tag and last closing tag and
 * escapes any in between (seen on 2.1.332: a second envelope arrives as `<\cross-session-message`).
 */
export function inboxText(items: readonly WakeItem[], names: NameLookup, replyTo: string): string {
  const senders: string[] = [];
  for (const item of items) {
    if (item.kind !== 'message') continue;
    const name = names.name(item.message.fromId);
    if (!senders.includes(name)) senders.push(name);
  }
  const shown = senders.length > 3 ? [...senders.slice(0, 3), `${senders.length - 3} more`] : senders;
  const fromName = shown.length > 0 ? `${shown.join(', ')} via attend` : 'attend';
  return envelope(replyTo, fromName, items.flatMap((i) => i.lines));
}

/**
 * A note of attend's own to the session (a SendMessage answer that could not be sent): one
 * line, on one line, inside the envelope, so it reads as attend's and cannot close it.
 */
export function inboxNoteText(line: string, replyTo: string): string {
  return envelope(replyTo, 'attend', [`[attend] ${neutralize(line).replace(/<\//g, '<\\/')}`]);
}

/** The post for a text; `from` is the deliverer's own `uds:` reply socket (receipts come there). */
export function inboxPost(text: string, from: string, msgId: string): InboxPost {
  return { type: 'user', message: { role: 'user', content: text }, from, msg_id: msgId, priority: 'next' };
}

export type InboxReceipt = 'held' | 'refused' | 'expired' | 'dropped';

/** A line that came to the reply socket: a receipt for one of our posts, a model's answer, or neither. */
export type ReplyLine = { kind: 'receipt'; status: InboxReceipt; of: string } | { kind: 'answer'; text: string; from: string; fromName?: string; msgId?: string } | { kind: 'other' };

const RECEIPTS = new Set(['held', 'refused', 'expired', 'dropped']);
const ENVELOPE = /^\s*<cross-session-message\b([^>]*)>\n?([\s\S]*?)\n?<\/cross-session-message>\s*$/;

/** Read one line from the reply socket (a receipt, or a `SendMessage` answer from the model). */
export function parseReplyLine(line: string): ReplyLine {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return { kind: 'other' };
  }
  if (typeof o !== 'object' || o === null) return { kind: 'other' };
  const r = o as Record<string, unknown>;
  if (r.type === 'control' && r.action === 'peer_message_status' && typeof r.status === 'string' && RECEIPTS.has(r.status) && typeof r.orig_msg_id === 'string') {
    // A refusal arrives as `status: "expired", status_detail: "refused"` (seen on 2.1.332).
    const status = r.status === 'expired' && r.status_detail === 'refused' ? 'refused' : (r.status as InboxReceipt);
    return { kind: 'receipt', status, of: r.orig_msg_id };
  }
  const message = r.message as { content?: unknown } | undefined;
  if (r.type === 'user' && typeof message?.content === 'string') {
    const m = ENVELOPE.exec(message.content);
    const fromName = m ? /from-name="([^"]*)"/.exec(m[1] ?? '')?.[1] : undefined;
    return {
      kind: 'answer',
      text: m ? (m[2] ?? '') : message.content,
      from: typeof r.from === 'string' ? r.from : '',
      ...(fromName !== undefined ? { fromName } : {}),
      ...(typeof r.msg_id === 'string' ? { msgId: r.msg_id } : {}),
    };
  }
  return { kind: 'other' };
}
