// Turning messages into terminal lines, pure. Bodies are neutralised (tools/wire/render.ts)
// before anything else, then hard-wrapped by terminal columns (width.ts) and capped, so a
// 10,000-character line or a body of thousands of lines costs a bounded number of rows and
// can never carry an escape sequence to the terminal.

import { addressees } from '../../wire/envelope.js';
import { addresseeLabel, scopeName } from '../../wire/display.js';
import { neutralize, plural } from '../../wire/render.js';
import type { ChatMessage, FeedItem } from './items.js';
import { rowsOf, textWidth, truncateColumns, wrapColumns } from '../../wire/width.js';

interface Seg {
  text: string;
  color?: string | undefined;
  bold?: boolean;
  dim?: boolean;
  inverse?: boolean;
}
export type Line = Seg[];

/** Rows a single message may take before the rest is folded into "… N more lines". */
export const MAX_BODY_LINES = 30;
const INDENT = '  ';

export interface LineContext {
  width: number;
  me: string;
  name(id: string): string;
  colorOf(id: string): string | undefined;
  /** The sender of a message by id, when it is in memory, for the thread marker. */
  parentSender(id: string): string | undefined;
  /** The tab being shown: the scope label is left out where it says nothing new. */
  tab: string;
  /** Body rows per message, so one message always fits on screen with its header. */
  maxBodyLines?: number;
  /** The id of the selected message, marked with ▶ (readable without colour). */
  selected?: string | null;
}

/** The selected message's marks: the header's prefix, and a bar the width of INDENT. */
const SELECTED_MARK = '▶';
const SELECTED_BAR = '│ ';

const wrapCache = new WeakMap<object, { width: number; max: number; lines: string[] }>();

/** A body as at most MAX_BODY_LINES rows of at most `width` terminal columns each. */
export function wrapBody(body: string, width: number, maxLines = MAX_BODY_LINES): string[] {
  const w = Math.max(8, width);
  const cap = Math.max(2, maxLines);
  const src = neutralize(body, { multiline: true }).split('\n');
  const out: string[] = [];
  const limit = cap + 1;
  for (const line of src) {
    if (out.length >= limit) break;
    out.push(...wrapColumns(line, w, limit - out.length));
  }
  if (out.length > cap) {
    // Count what is hidden without building the rows: a huge body stays cheap.
    let total = 0;
    for (const line of src) total += rowsOf(line, w);
    const hidden = Math.max(1, total - (cap - 1));
    return [...out.slice(0, cap - 1), `… ${plural(hidden, 'more line')} (attend inbox <id> shows it all)`];
  }
  return out;
}

function cachedBody(msg: ChatMessage, width: number, max: number): string[] {
  const hit = wrapCache.get(msg);
  if (hit && hit.width === width && hit.max === max) return hit.lines;
  const lines = wrapBody(msg.body, width - INDENT.length, max);
  wrapCache.set(msg, { width, max, lines });
  return lines;
}

export function countLines(item: FeedItem, width: number, max = MAX_BODY_LINES): number {
  if (item.kind === 'notice') return wrapBody(item.notice.text, width - INDENT.length).length;
  return 1 + cachedBody(item.msg, width, max).length;
}

function hhmm(time: number): string {
  const d = new Date(time);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:${String(d.getSeconds()).padStart(2, '0')}`;
}

function scopeTag(msg: ChatMessage): string {
  // A tray is `dm` here, after the `direct` tab that shows it; the rest by the one scope rule.
  const labels = msg.scopes.map((s) => (s.kind === 'tray' ? 'dm' : scopeName(s)));
  return [...new Set(labels)].join(' ');
}

function truncate(line: Line, width: number): Line {
  let left = width;
  const out: Line = [];
  for (const seg of line) {
    if (left <= 0) break;
    const w = textWidth(seg.text);
    if (w <= left) {
      out.push(seg);
      left -= w;
    } else {
      out.push({ ...seg, text: truncateColumns(seg.text, left) });
      left = 0;
    }
  }
  return out;
}

export function itemLines(item: FeedItem, lc: LineContext): Line[] {
  if (item.kind === 'notice') {
    const color = item.notice.level === 'error' ? 'red' : undefined;
    return wrapBody(item.notice.text, lc.width - INDENT.length).map((t, i) => [{ text: `${i === 0 ? '* ' : INDENT}${t}`, color, dim: item.notice.level === 'info' }]);
  }
  const m = item.msg;
  const sel = lc.selected != null && m.id === lc.selected;
  const who = m.fromId === lc.me ? `${neutralize(lc.name(m.fromId))} (you)` : neutralize(lc.name(m.fromId));
  const header: Line = [
    ...(sel ? [{ text: SELECTED_MARK, bold: true, inverse: true }, { text: ' ' }] : []),
    { text: hhmm(m.time), dim: !sel, bold: sel },
    { text: ' ' },
    { text: who, color: lc.colorOf(m.fromId), bold: true },
  ];
  // One label each: "root (you)", not "root (you) (human)" (issue 10, small things).
  if (m.fromKind === 'human' && m.fromId !== lc.me) header.push({ text: ' (human)', dim: true });
  // Marked in every rendering (issue 23 §3).
  if (m.urgency === 'urgent') header.push({ text: ' URGENT', bold: true, color: 'red' });
  // A signed message is the norm; an unsigned one says so (issue 14: chat shows sig).
  if (m.sig === 'none') header.push({ text: ' unsigned', dim: true });
  // Signed by a key that replaced a lost one (issue 20): a new identity, said in every reader.
  if (m.newKeySince !== undefined) header.push({ text: ' new key', dim: true });
  const ids = addressees(m.to);
  if (ids.length > 0) header.push({ text: ` → ${neutralize(addresseeLabel(m, lc))}` });
  const tag = scopeTag(m);
  if (lc.tab === 'merged' || tag !== lc.tab) header.push({ text: `  ${tag}`, dim: true });
  if (m.re !== undefined) {
    const parent = lc.parentSender(m.re);
    header.push({ text: `  ↳ ${parent !== undefined ? `re ${neutralize(parent)}` : `re ${m.re.slice(-8)}`}`, dim: true });
  }
  if (m.onBehalfOf !== undefined) header.push({ text: `  for ${neutralize(m.onBehalfOf)} (${m.obo === 'verified' ? 'verified' : 'claimed'})`, dim: true });
  const body = cachedBody(m, lc.width, lc.maxBodyLines ?? MAX_BODY_LINES).map((t): Line => (sel ? [{ text: SELECTED_BAR, bold: true }, { text: t }] : [{ text: INDENT + t }]));
  return [truncate(header, lc.width), ...body];
}

interface Window {
  lines: Line[];
  /** Every loaded item is on screen or above it: time to load older ones. */
  atTop: boolean;
  /** The largest scroll that still shows something. */
  maxScroll: number;
}

/**
 * The rows the feed shows: the bottom `height` rows, `scroll` rows up from the newest.
 * Walks back from the end so the cost follows the screen, not the history.
 */
export function visibleWindow(items: FeedItem[], height: number, scroll: number, lc: LineContext): Window {
  const need = height + scroll;
  const collected: Line[][] = [];
  let count = 0;
  let i = items.length - 1;
  for (; i >= 0 && count < need; i--) {
    const ls = itemLines(items[i] as FeedItem, lc);
    collected.push(ls);
    count += ls.length;
  }
  const all: Line[] = [];
  for (let k = collected.length - 1; k >= 0; k--) all.push(...(collected[k] as Line[]));
  const reachedTop = i < 0;
  const end = Math.max(0, all.length - scroll);
  const start = Math.max(0, end - height);
  return { lines: all.slice(start, end), atTop: reachedTop && start === 0, maxScroll: reachedTop ? Math.max(0, all.length - height) : Number.MAX_SAFE_INTEGER };
}
