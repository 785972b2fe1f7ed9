// Addressing in the compose box (issue #5 §2): a leading run of `@Name` / `#channel`
// tokens picks the destination; the rest is the body. Pure: peers and channels come in as
// data, so the same rules drive the destination line, Tab completion and the send.

import { type AddressBook, type Peer, lookupTarget, reachOf } from '../../bus/presence/index.js';
import { describeDelivery } from '../../verbs/delivery.js';
import { peerLabel } from '../../wire/display.js';
import { editDistance } from '../../wire/names.js';

/** A party a draft names: as the verbs' address book has it (live, of another machine, or gone). */
export type PeerRef = Peer;

export interface RouteSources {
  /**
   * Whom `@name` may name: the verbs' address book (tools/verbs/address.ts), the live roster
   * here and elsewhere, then every party the bus has known, looked up by the send's own
   * resolver (tools/bus/presence/targets.ts lookupTarget): one resolver, not two.
   */
  book: AddressBook;
  /** Bare channel names known on this bus. */
  channels: string[];
  me: string;
}

/** Where a draft goes when it names nobody: decided by the active tab. */
export type DefaultDest = { kind: 'open' } | { kind: 'channel'; channel: string } | { kind: 'direct'; to: PeerRef[] } | { kind: 'none'; reason: string };

export type Destination =
  | { kind: 'open' }
  | { kind: 'channel'; channel: string; to: PeerRef[] }
  | { kind: 'direct'; to: PeerRef[] };

export type RouteResult = { ok: true; dest: Destination; body: string } | { ok: false; reason: string; body: string };

interface Token {
  sigil: '@' | '#';
  name: string;
  start: number;
  end: number;
}

// Names on the bus: channel names and display names (given names, earlier names, usernames).
// `@human:<username>` names a person where a session shares the name, `@host:name` a party
// of another machine (the CLI's forms).
const TOKEN = /^([@#])((?:human:)?[\p{L}\p{N}_.-]*(?::[\p{L}\p{N}_.-]+)?)/u;

/** Split the leading address tokens from the body. */
export function parseAddress(text: string): { tokens: Token[]; body: string } {
  const tokens: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
    const m = TOKEN.exec(text.slice(i));
    if (!m) break;
    const end = i + m[0].length;
    // `@Nick:` or `#ops,` is prose that happens to start with a sigil, not an address; so is
    // `#tag:value` (a channel name has no colon).
    if (end < text.length && !/\s/.test(text[end] ?? '')) break;
    if (m[1] === '#' && m[2]?.includes(':')) break;
    tokens.push({ sigil: m[1] as '@' | '#', name: m[2] ?? '', start: i, end });
    i = end;
  }
  const body = tokens.length === 0 ? text : text.slice(i).replace(/^[ \t]+/, '').replace(/^\n/, '');
  return { tokens, body };
}

// The edit distance is the CLI's too (tools/bus/presence/targets.ts: an unknown name's closest).
export { editDistance } from '../../wire/names.js';

type Match<T> = { kind: 'one'; item: T } | { kind: 'ambiguous'; items: T[] } | { kind: 'none'; suggestions: T[] };

/** An id prefix this long names one party, as `attend peers` shows them (targets.ts). */
const KEY_PREFIX = 8;

/**
 * A name among a few (channels for `#`, the live roster for the slash commands): an exact
 * name (case-insensitive) or key; else a unique name prefix or a key prefix of 8 or more.
 * Whatever matches more than one is ambiguous. A typo never matches (issue 10 item 13): close
 * names (edit distance ≤ 2, or containing the query) come back only as suggestions. Parties
 * a draft names go through the send's resolver instead (resolveRoute).
 */
export function matchName<T>(query: string, items: T[], nameOf: (t: T) => string, keyOf?: (t: T) => string): Match<T> {
  const q = query.toLowerCase();
  const pick = (found: T[]): Match<T> | null => (found.length === 1 ? { kind: 'one', item: found[0] as T } : found.length > 1 ? { kind: 'ambiguous', items: found } : null);
  const exact = pick(items.filter((t) => nameOf(t).toLowerCase() === q || (keyOf !== undefined && keyOf(t) === query)));
  if (exact) return exact;
  // A prefix names a name's start: `@codex` for codex-api when it is alone.
  const prefixed = pick(items.filter((t) => nameOf(t).toLowerCase().startsWith(q) || (keyOf !== undefined && query.length >= KEY_PREFIX && keyOf(t).startsWith(query))));
  if (prefixed) return prefixed;
  return { kind: 'none', suggestions: closeNames(q, items, nameOf) };
}

/** Names near a query, closest first: within edit distance 2, or containing it. */
function closeNames<T>(query: string, items: T[], nameOf: (t: T) => string): T[] {
  const q = query.toLowerCase();
  const scored: { t: T; d: number }[] = [];
  for (const t of items) {
    const n = nameOf(t).toLowerCase();
    const d = editDistance(q, n, 2);
    if (d <= 2) scored.push({ t, d });
    else if (q.length >= 2 && n.includes(q)) scored.push({ t, d: 3 });
  }
  return scored.sort((x, y) => x.d - y.d || nameOf(x.t).localeCompare(nameOf(y.t))).map((x) => x.t);
}

/** How a party is named in the compose box: `@name`, `@host:name` for one of another machine. */
function handle(p: PeerRef): string {
  return p.host !== undefined ? `@${p.host}:${p.name}` : `@${p.name}`;
}

function liveList(src: RouteSources): string {
  const others = src.book.peers.filter((p) => p.id !== src.me);
  return others.length === 0 ? 'nobody else is live' : `live: ${others.map(peerLabel).join(', ')}`;
}

/** Candidates of an ambiguous name: their names, with kind and id where names repeat. */
function describeCandidates(items: PeerRef[], me: string): string {
  const label = (p: PeerRef) => (p.host !== undefined ? `${p.host}:${p.name}` : peerLabel(p));
  const counts = new Map<string, number>();
  for (const p of items) counts.set(label(p).toLowerCase(), (counts.get(label(p).toLowerCase()) ?? 0) + 1);
  return items
    .map((p) => {
      if ((counts.get(label(p).toLowerCase()) ?? 0) < 2) return label(p);
      const who = p.id === me ? 'human, you' : p.kind === 'human' ? 'human' : `agent ${p.id.slice(0, KEY_PREFIX)}`;
      return `${label(p)} (${who})`;
    })
    .join(', ');
}

function didYouMean(words: string[]): string {
  return words.length === 0 ? '' : `; did you mean ${words.slice(0, 3).join(' or ')}? (Tab completes)`;
}

/**
 * What `@name` names, by the send's resolver over the address book (a live party, one of
 * another machine, or one the bus has known, whose message waits for it), with a unique
 * prefix of a live name as well: the destination line shows whom before Enter.
 */
function resolveParty(name: string, src: RouteSources): { ok: true; peers: PeerRef[] } | { ok: false; reason: string } {
  const r = lookupTarget(name, src.book.peers, { ...src.book.opts, namePrefix: true });
  if (r.ok) {
    if (r.peers.some((p) => p.id === src.me)) return { ok: false, reason: `@${name} is you` };
    return r;
  }
  if (r.problem === 'invalid') return { ok: false, reason: r.reason };
  if (r.problem === 'ambiguous') {
    // The operator is in the pool, so a name they share with an agent is ambiguous rather
    // than silently the agent's (issue 10 item 10). Same names: only an id tells them apart.
    const same = new Set(r.candidates.map((p) => p.name.toLowerCase())).size < r.candidates.length;
    const remote = r.candidates.some((p) => p.host !== undefined);
    const byId = remote ? '; @host:name names a party of another machine' : same ? "; @human:<username> names the person, @ and 8 or more characters of an agent's id the agent" : '';
    return { ok: false, reason: `@${name} is ambiguous: ${describeCandidates(r.candidates, src.me)}${byId}` };
  }
  if (r.human) return { ok: false, reason: `no known human called ${name.slice('human:'.length) || '(nobody)'}; ${liveList(src)}` };
  const near = r.closest.filter((p) => p.id !== src.me).map((p) => `${handle(p)}${p.gone && p.kind === 'agent' && p.host === undefined ? ' (gone)' : ''}`);
  return { ok: false, reason: `nobody known is called @${name}${near.length ? didYouMean(near) : `; ${liveList(src)}`}` };
}

export function resolveRoute(text: string, src: RouteSources, dflt: DefaultDest): RouteResult {
  const { tokens, body } = parseAddress(text);
  const to: PeerRef[] = [];
  let channel: string | null = null;
  let open = false;
  for (const t of tokens) {
    if (t.name.length === 0) return { ok: false, reason: `'${t.sigil}' needs a name`, body };
    if (t.sigil === '@') {
      const r = resolveParty(t.name, src);
      if (!r.ok) return { ok: false, reason: r.reason, body };
      for (const p of r.peers) if (!to.some((x) => x.id === p.id)) to.push(p);
      continue;
    }
    const lower = t.name.toLowerCase();
    if (lower === 'open' || lower === 'broadcast') {
      open = true;
      continue;
    }
    const m = matchName(t.name, src.channels, (c) => c);
    if (m.kind === 'none') {
      const near = didYouMean(m.suggestions.map((c) => `#${c}`));
      return { ok: false, reason: `no channel #${t.name}${near || (src.channels.length ? `; channels: ${src.channels.map((c) => `#${c}`).join(', ')}` : '')}`, body };
    }
    if (m.kind === 'ambiguous') return { ok: false, reason: `#${t.name} is ambiguous: ${m.items.map((c) => `#${c}`).join(', ')}`, body };
    if (channel !== null && channel !== m.item) return { ok: false, reason: 'a message goes to one channel at a time', body };
    channel = m.item;
  }
  if (open && (channel !== null || to.length > 0)) return { ok: false, reason: '#open goes to everyone; drop the other addresses', body };
  if (channel !== null) return { ok: true, dest: { kind: 'channel', channel, to }, body };
  if (to.length > 0) return { ok: true, dest: { kind: 'direct', to }, body };
  if (open) return { ok: true, dest: { kind: 'open' }, body };
  if (dflt.kind === 'none') return { ok: false, reason: dflt.reason, body };
  if (dflt.kind === 'open') return { ok: true, dest: { kind: 'open' }, body };
  if (dflt.kind === 'channel') return { ok: true, dest: { kind: 'channel', channel: dflt.channel, to: [] }, body };
  return { ok: true, dest: { kind: 'direct', to: dflt.to }, body };
}

/** The destination line shown above the compose box. */
export function describeDest(dest: Destination): string {
  if (dest.kind === 'open') return '#open (everyone)';
  const names = dest.to.map(peerLabel).join(', ');
  if (dest.kind === 'channel') return names ? `#${dest.channel}, to ${names}` : `#${dest.channel}`;
  return names;
}

export interface Reach {
  /** Live peers other than me. */
  live: PeerRef[];
  /** Members of each channel (ids). */
  members(channel: string): string[];
  /** Now, ms: a party that is not live waits since it was last seen. */
  now: number;
}

/**
 * Why a message must not be sent at all, or null: a channel message names a party outside
 * the channel, who would never see it. A party that is not live is never a reason: the bus
 * keeps a mailbox for every party it has known (issue 21 item 1), and reachNote says that it
 * waits. #open, and a channel message that names nobody, are always sent, live readers or
 * not: history lasts, and whoever comes back reads it (issue 10 item 12).
 */
export function unreachableReason(dest: Destination, reach: Reach): string | null {
  // A channel message is read by members only: one addressed to someone outside would never
  // be seen, and the send verb refuses it (issue 10 item 7); the line says so before Enter.
  if (dest.kind === 'channel' && dest.to.length > 0) {
    const members = new Set(reach.members(dest.channel));
    const outside = dest.to.filter((p) => !members.has(p.id));
    if (outside.length > 0) {
      return `${outside.map(peerLabel).join(', ')} ${outside.length > 1 ? 'are' : 'is'} not in #${dest.channel} and would never see it (/invite ${handle(outside[0] as PeerRef)} #${dest.channel})`;
    }
  }
  return null;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Who sees a message now and who does not yet: the destination line's preview before Enter
 * (after it, the send verb's own delivery note). For a message that names its parties, how
 * it reaches each, in the send's words (tools/verbs/delivery.ts describeDelivery: "waits for
 * api (gone), last seen 2h ago"); for #open and a channel, who of its readers is live. Null
 * when everyone it is for is shown it at once.
 */
export function reachNote(dest: Destination, reach: Reach, me: string): string | null {
  const live = reach.live.filter((p) => p.id !== me);
  if (dest.kind === 'open') return live.length === 0 ? 'nobody else is live for #open now; it waits in history for whoever comes' : null;
  if (dest.kind === 'direct' || dest.to.length > 0) {
    const rs = dest.to.map((p) => ({ id: p.id, name: peerLabel(p), kind: p.kind, reach: reachOf(p, reach.now) }));
    return rs.every((r) => r.reach.word === 'shown') ? null : describeDelivery(rs, 'them', reach.now);
  }
  const members = reach.members(dest.channel).filter((id) => id !== me);
  const liveIds = new Set(live.map((p) => p.id));
  const now = live.filter((p) => members.includes(p.id));
  const later = members.filter((id) => !liveIds.has(id)).length;
  if (members.length === 0) return `nobody else is in #${dest.channel} yet; it waits in history (/invite @name #${dest.channel})`;
  if (now.length === 0) return `nobody else in #${dest.channel} is live now; it waits in history for its ${plural(later, 'other member', 'other members')}`;
  const seen = `seen now by ${now.map((p) => p.name).join(', ')}`;
  return later > 0 ? `${seen}; it waits for ${plural(later, 'other member', 'other members')}` : null;
}

// --- Tab completion -------------------------------------------------------------------

export interface Completion {
  /** The text and cursor before the first Tab, so each Tab can replace the same word. */
  base: string;
  baseCursor: number;
  start: number;
  candidates: string[];
  index: number;
  /** The text the last Tab produced: a different text means the user moved on. */
  produced: string;
}

interface CompleteSources extends RouteSources {
  commands: string[];
}

/**
 * Whom `@` completes: the live (here and elsewhere) and the parties the bus has recorded
 * (its first, cached tier), so a name the resolver suggests is one Tab away.
 */
function handles(src: RouteSources): string[] {
  const known = src.book.opts.known?.[0]?.() ?? [];
  return [...src.book.peers, ...known].filter((p) => p.id !== src.me).map(handle);
}

function candidatesFor(word: string, isFirst: boolean, src: CompleteSources): string[] {
  const sigil = word[0];
  const q = word.slice(1).toLowerCase();
  let pool: string[];
  if (sigil === '@') pool = handles(src);
  else if (sigil === '#') pool = ['#open', ...src.channels.map((c) => `#${c}`)];
  else if (sigil === '/' && isFirst) pool = src.commands.map((c) => `/${c}`);
  else return [];
  const prefixed = pool.filter((c) => c.slice(1).toLowerCase().startsWith(q));
  if (prefixed.length > 0) return [...new Set(prefixed)].sort((a, b) => a.localeCompare(b));
  // Fuzzy, closest first: Tab turns `@alpah` into `@alpha`, which the send rule then takes.
  return [...new Set(closeNames(q, pool, (c) => c.slice(1)))];
}

/** One Tab press. Returns null when there is nothing to complete. */
export function completeAt(text: string, cursor: number, src: CompleteSources, prev: Completion | null): { text: string; cursor: number; completion: Completion } | null {
  if (prev && prev.produced === text && prev.candidates.length > 0) {
    const index = (prev.index + 1) % prev.candidates.length;
    return apply(prev, index);
  }
  const before = text.slice(0, cursor);
  const start = Math.max(before.lastIndexOf(' '), before.lastIndexOf('\n')) + 1;
  const word = before.slice(start);
  if (word.length === 0 || !'@#/'.includes(word[0] ?? '')) return null;
  const candidates = candidatesFor(word, start === 0, src);
  if (candidates.length === 0) return null;
  return apply({ base: text, baseCursor: cursor, start, candidates, index: 0, produced: '' }, 0);
}

function apply(c: Completion, index: number): { text: string; cursor: number; completion: Completion } {
  const pick = `${c.candidates[index] ?? ''} `;
  const rest = c.base.slice(c.baseCursor).replace(/^ /, '');
  const text = c.base.slice(0, c.start) + pick + rest;
  const cursor = c.start + pick.length;
  return { text, cursor, completion: { ...c, index, produced: text } };
}
