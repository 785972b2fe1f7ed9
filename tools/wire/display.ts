// What a party and a scope are called on screen (issue 19, "each rule once"). The CLI, the
// chat, the MCP channel push, the sensor and the drain all show names through these, so a
// session that ended reads `api (gone)` in every one of them (docs/architecture.md,
// "Addressing"). Display names are presentation only (spec §4): nothing here decides
// routing, and callers neutralize what they print (names come from records anyone can write).
// Pure.

import { addressees, type Scope } from './envelope.js';
import { displayId, splitQualified } from './hosts.js';
import { formatAge } from './render.js';

/**
 * How an id with no name is shown: a long session id by its first 8 characters, a party of
 * another machine as `name@host` (tools/wire/hosts.ts), anything else as it is.
 */
export function shortId(id: string): string {
  if (splitQualified(id)) return displayId(id);
  return id.length > 12 && /^[0-9a-f-]+$/i.test(id) ? `${id.slice(0, 8)}…` : id;
}

/** Known names may mark ids live on another machine (tools/bus/presence/names.ts): those are not gone. */
export interface KnownNames extends ReadonlyMap<string, string> {
  elsewhere?: ReadonlySet<string>;
}

/** How the last known name of a party that is no longer live is shown (issue #10 item 16). */
function goneName(name: string): string {
  return `${name} (gone)`;
}

/** A known name as shown: live elsewhere as it is (`api@box`), else marked gone. */
export function knownName(known: ReadonlyMap<string, string> | undefined, id: string): string | undefined {
  const last = known?.get(id);
  if (last === undefined) return undefined;
  return (known as KnownNames).elsewhere?.has(id) ? last : goneName(last);
}

/**
 * What a party is called: its name in the live roster (`live`: id → display name), else its
 * last known name (`known`, tools/bus/presence/names.ts) marked gone, else `shortId`.
 */
export function partyName(id: string, live: ReadonlyMap<string, string>, known?: ReadonlyMap<string, string>): string {
  return live.get(id) ?? knownName(known, id) ?? shortId(id);
}

/**
 * What a party the resolver found is called (tools/bus/presence/targets.ts: live, of another
 * machine, or one the bus has known): `name@host` on another machine, an agent that ended by
 * its last name marked gone, else its name (a long session id cut by `shortId`). A person who
 * is not in chat is not gone: they read when they look.
 */
export function peerLabel(p: { id: string; name: string; kind: 'agent' | 'human'; host?: string | undefined; gone?: true | undefined }): string {
  const name = p.name === p.id ? shortId(p.id) : p.name;
  if (p.host !== undefined) return p.name === p.id ? name : `${p.name}@${p.host}`;
  return p.gone && p.kind === 'agent' && p.name !== p.id ? goneName(name) : name;
}

export interface NameLookup {
  /** The display name for an id (presentation only): `partyName`. */
  name(id: string): string;
  /** The reader, shown as `you` by `partyLabel` and `addresseeLabel`. */
  me: string;
}

/** A `NameLookup` over the live roster (a map, or the peers themselves) and the known names. */
export function nameLookup(names: ReadonlyMap<string, string> | Iterable<{ id: string; name: string }>, me: string, known?: ReadonlyMap<string, string>): NameLookup {
  const live = names instanceof Map ? (names as ReadonlyMap<string, string>) : new Map([...(names as Iterable<{ id: string; name: string }>)].map((p) => [p.id, p.name]));
  return { me, name: (id) => partyName(id, live, known) };
}

/** What a party is called to the reader: `you` for the reader itself, else its name. */
export function partyLabel(id: string, names: NameLookup): string {
  return id === names.me ? 'you' : names.name(id);
}

/**
 * To whom a message went, as the reader sees it: `#open`, `#name`, `this tray` (a legacy tray
 * line), else every addressee by `partyLabel` (`you, Tam-beta`): a reader addressed beside
 * others is told who else was (docs/architecture.md, "Addressing").
 */
export function addresseeLabel(m: { to: string }, names: NameLookup): string {
  if (m.to === '*') return '#open';
  if (m.to === 'tray') return 'this tray';
  if (m.to.startsWith('#')) return m.to;
  return addressees(m.to)
    .map((id) => partyLabel(id, names))
    .join(', ');
}

/** What a scope is called: `#open`, `#name`, or `tray` (a project's tray, whoever's it is). */
export function scopeName(scope: Scope): string {
  if (scope.kind === 'open') return '#open';
  if (scope.kind === 'channel') return `#${scope.name}`;
  return 'tray';
}

/**
 * How a message reaches a recipient (issue 21 item 7), the one vocabulary of the CLI, the
 * chat, MCP results and `peers`: `shown` by a live conduit (which), `next-turn` (its Stop hook
 * at its next turn boundary, and nothing sooner), `waiting` (no conduit of it is live: the
 * message waits on the bus until one runs; since when it was last seen), `held` (by whom or
 * what: a relay, a hub until a machine is back). Decided by tools/bus/presence/reach.ts reachOf.
 */
export type ReachWord = 'shown' | 'next-turn' | 'waiting' | 'held';

export interface Reach {
  word: ReachWord;
  /** `shown`: the conduit (`sensor`, `chat`, `sensor on box`); `held`: who or what holds it; `waiting`: why, for a party that is live. */
  by?: string;
  /** `waiting`: ms it was last seen live or sending; null when nothing says. */
  since?: number | null;
}

/** `shown (sensor)`, `at its next turn`, `waiting, last seen 2h ago`, `held by the hub until box is back`. */
export function reachText(r: Reach, now: number): string {
  if (r.word === 'shown') return r.by !== undefined ? `shown (${r.by})` : 'shown';
  if (r.word === 'next-turn') return 'at its next turn';
  if (r.word === 'held') return `held${r.by !== undefined ? ` by ${r.by}` : ''}`;
  return `waiting, ${waitingWhy(r, now)}`;
}

/** Why a message waits: a live party's missing conduit, else when it was last seen. */
export function waitingWhy(r: Reach, now: number): string {
  return r.by ?? lastSeen(r.since ?? null, now);
}

/** `last seen 2h ago`, or `never seen live` when nothing says. */
export function lastSeen(since: number | null, now: number): string {
  return since === null || since <= 0 ? 'never seen live' : `last seen ${formatAge(Math.max(0, now - since))} ago`;
}

/** The reach in a column or a roster: `shown (sensor)`, `next turn`, `waiting`, `held`. */
export function reachShort(r: Reach): string {
  if (r.word === 'shown') return r.by !== undefined ? `shown (${r.by})` : 'shown';
  return r.word === 'next-turn' ? 'next turn' : r.word;
}
