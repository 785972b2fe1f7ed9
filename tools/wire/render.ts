// Rendering bodies and headers as data (docs/architecture.md, "Delivery": "Every body shown to a model or a terminal
// is rendered as data"). Pure.

import { MAX_ON_BEHALF_OF, type ResolvedEnvelope } from './envelope.js';

// Bidi overrides and isolates, zero-width joiners used to hide text, the BOM, and the line
// and paragraph separators that some terminals break on.
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2028\u2029\u2060-\u2069\uFEFF]/g;

function controlPicture(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code); // ␛ ␍ ␀ …
  if (code === 0x7f) return '\u2421'; // ␡
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

const PICTOGRAPH = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]/u;

/** The code point that ends at UTF-16 offset `end`, or undefined at the start. */
function codePointBefore(text: string, end: number): number | undefined {
  if (end <= 0) return undefined;
  const unit = text.charCodeAt(end - 1);
  return unit >= 0xdc00 && unit <= 0xdfff && end >= 2 ? text.codePointAt(end - 2) : text.codePointAt(end - 1);
}

/**
 * A zero-width joiner between two pictographs (👨‍👩‍👧, 👩🏽‍💻, 🏳️‍🌈) builds one emoji and
 * hides no text, so it is kept; anywhere else it could hide a word's seam and is shown.
 */
function joinsEmoji(text: string, at: number): boolean {
  const prev = codePointBefore(text, text.charCodeAt(at - 1) === 0xfe0f ? at - 1 : at);
  const next = text.codePointAt(at + 1);
  return prev !== undefined && next !== undefined && PICTOGRAPH.test(String.fromCodePoint(prev)) && PICTOGRAPH.test(String.fromCodePoint(next));
}

/**
 * Make untrusted text inert. Control characters (C0, DEL, C1) become visible control
 * pictures, so an escape sequence shows as `␛[31m` and does nothing; bidi overrides and
 * invisible characters become `<U+202E>`. `multiline` keeps `\n` (and turns `\t` into
 * spaces); otherwise newlines become ` ⏎ ` so the text stays on one line.
 */
export function neutralize(text: string, opts: { multiline?: boolean } = {}): string {
  let out = text.replace(/\r\n/g, '\n');
  out = out.replace(/\t/g, '    ');
  out = out.replace(/[\u0000-\u0009\u000B-\u001F\u007F\u0080-\u009F]/g, controlPicture);
  out = out.replace(INVISIBLE, (ch, at: number, whole: string) => (ch === '\u200D' && joinsEmoji(whole, at) ? ch : controlPicture(ch)));
  // Combining marks stack on their base character without limit ("Zalgo" text), spilling
  // over the lines above and below in a terminal. Real scripts need a few per base
  // (Vietnamese two, pointed Hebrew up to four); the rest of a run is dropped (issue #10).
  out = out.replace(EXCESS_MARKS, '$1');
  if (!opts.multiline) out = out.replace(/\n/g, ' \u23CE ');
  return out;
}

/** Combining marks kept per base character by neutralize. */
export const MAX_MARKS = 4;
const EXCESS_MARKS = new RegExp(`(\\p{M}{${MAX_MARKS}})\\p{M}+`, 'gu');

/** What starts every body line the drain shows: a quote bar no header or markup starts with. */
export const BODY_QUOTE = '  \u2502 ';

// `<tag`, `</tag`, `<!`, `<?`: anything a reader could take for the harness's own markup
// (`<system-reminder>`, `</user>`, `<function_results>`...). Its `<` becomes `‹`.
const TAG_OPEN = /<(?=[/!?]?[A-Za-z])/g;

/**
 * A multi-line body rendered for a model as quoted data (issue #10 item 5): every line is
 * neutralized, begins with BODY_QUOTE, and no tag-like `<` survives, so no line of a body
 * can pass for an `[attend message ...]` header, a `message from ...` line, a turn marker
 * such as `Human:`, or harness markup. The exact text stays available in `attend inbox <id>`.
 */
export function quoteBody(body: string): string[] {
  return defuseMarkup(neutralize(body, { multiline: true }))
    .split('\n')
    .map((line) => `${BODY_QUOTE}${line}`);
}

/** Turn the `<` of anything tag-like into `‹`, so a body cannot open or close harness markup. */
export function defuseMarkup(text: string): string {
  return text.replace(TAG_OPEN, '\u2039');
}

/** Only characters in the wide class can reach a header; anything else is dropped. */
function headerValue(value: string): string {
  return value.replace(/[^A-Za-z0-9_@.,:/#*-]/g, '?');
}

/**
 * The machine-readable header both conduits carry:
 * `[attend message from_kind=agent from=<id> sig=ok to=* id=<id>]`.
 */
export function messageHeader(env: ResolvedEnvelope & { sig?: 'ok' | 'none' | 'bad' | undefined; newKeySince?: number | undefined; obo?: 'verified' | 'claimed' | undefined }, id: string): string {
  const parts = [`from_kind=${env.fromKind}`, `from=${headerValue(env.fromId)}`];
  // Whether the sender is proven (issue 14): ok (signed by a key of from), none (unsigned).
  // A `bad` message is held, never surfaced; the value is here for completeness.
  if (env.sig !== undefined) parts.push(`sig=${env.sig}`);
  // A key that replaced a lost one (issue 20): signed, but not by the identity of before.
  if (env.newKeySince !== undefined) parts.push('key=new');
  // A file written without attend may carry any length: cut as the writer's cap would.
  // `(verified)` only while a signed delegation covers the message (issue 14 §5).
  if (env.onBehalfOf !== undefined) {
    const v = env.onBehalfOf.length > MAX_ON_BEHALF_OF ? `${env.onBehalfOf.slice(0, MAX_ON_BEHALF_OF)}...` : env.onBehalfOf;
    parts.push(`on_behalf_of=${headerValue(v)} (${env.obo === 'verified' ? 'verified' : 'claimed'})`);
  }
  parts.push(`to=${headerValue(env.to)}`);
  if (env.re !== undefined) parts.push(`re=${headerValue(env.re)}`);
  // Marked in every rendering (issue 23 §3); the value is one of two words, never a body's.
  if (env.urgency !== undefined) parts.push(`urgency=${env.urgency}`);
  parts.push(`id=${headerValue(id)}`);
  return `[attend message ${parts.join(' ')}]`;
}

/** How the line after a header begins: `urgent message from`, or `message from`. */
export function messageLead(env: Pick<ResolvedEnvelope, 'urgency'>): string {
  return env.urgency === 'urgent' ? 'URGENT message from' : 'message from';
}

/** Split one-line text into at most `max` chunks of `size` characters (code points kept whole). */
export function chunkText(text: string, size = 260, max = 3): { chunks: string[]; truncated: boolean } {
  const cps = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < cps.length && chunks.length < max; i += size) {
    chunks.push(cps.slice(i, i + size).join(''));
  }
  if (chunks.length === 0) chunks.push('');
  return { chunks, truncated: cps.length > size * max };
}

/** `1 message`, `2 messages`, `0 messages`: a count with its noun agreeing (never "1 messages"). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** A compact age such as `4s`, `12m`, `3h`, `2d`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.round(h / 24)}d`;
}
