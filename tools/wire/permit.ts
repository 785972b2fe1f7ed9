// Who may send to whom (spec §7, seed 000 D3–D5, issue 14 §2). Pure: the policy, the
// lineage and the channel memberships come in as data; one call decides one message for one
// reader in O(depth) lookups in hash sets and maps, so 1,000 grants cost what 1 does.
//
// Rules, first match wins:
//   1. a message to or from oneself is allowed;
//   2. an explicit deny (from → to, or from → #channel) refuses; so does a stranger (a
//      sender attend cannot place) that has no grant by name;
//   3. a channel: its members post and read there (membership is the grant), and so does
//      the bus owner (a human); in mode `family` so does anyone of the bus (today's rule);
//   4. #open (`*`): who may post is `open` in the policy (everyone | family | humans |
//      granted); humans always may;
//   5. a grant (from → to, or `--both`) allows; a human (the bus owner) reaches every node;
//   6. the same group (a parent and its direct children, both ways, siblings too) allows;
//   7. mode `family` (the default): every session and person of this bus (one Unix user's)
//      is family; a sender attend cannot place is a stranger; mode `groups`: nothing else;
//   8. anything else is refused, naming the rule.

type OpenPost = 'everyone' | 'family' | 'humans' | 'granted';
type Mode = 'family' | 'groups';

export interface Grant {
  from: string;
  to: string;
  /** A grant for one channel only (`attend allow a b --channel ops`). */
  channel?: string | undefined;
}

export interface Policy {
  version: 1;
  /** `family` keeps one person's sessions talking with no set-up; `groups` is the strict model. */
  mode: Mode;
  open: OpenPost;
  /** The deepest lineage a policy lets grow (seed 000 D5: a number, never a structure). */
  maxDepth: number;
  allow: Grant[];
  deny: Grant[];
}

export const DEFAULT_POLICY: Policy = { version: 1, mode: 'family', open: 'everyone', maxDepth: 8, allow: [], deny: [] };

export interface Lineage {
  /** The recorded parent of a node (a session id or a human id); undefined when unknown. */
  parentOf(id: string): string | undefined;
}

/** A policy indexed for O(1) lookups: build once per reader, use per message. */
export interface PolicyIndex {
  policy: Policy;
  allow: Set<string>;
  deny: Set<string>;
}

const key = (from: string, to: string, channel?: string) => `${from}\u0000${to}\u0000${channel ?? ''}`;

export function indexPolicy(policy: Policy): PolicyIndex {
  return {
    policy,
    allow: new Set(policy.allow.map((g) => key(g.from, g.to, g.channel))),
    deny: new Set(policy.deny.map((g) => key(g.from, g.to, g.channel))),
  };
}

type Verdict = { ok: true; rule: string } | { ok: false; rule: string };

export interface Delivery {
  from: string;
  fromKind: 'agent' | 'human' | 'unknown';
  /** The reader (or, at send, one recipient); for #open and channels, the poster's audience. */
  to: string;
  /** `*` for #open, the channel name for a channel, undefined for a directed message. */
  where?: { open: true } | { channel: string; members: ReadonlySet<string> } | undefined;
}

/** How many parents up a node's recorded lineage goes (0 for a root), bounded by `limit`. */
export function depthOf(id: string, lineage: Lineage, limit: number): number {
  let cur = id;
  let d = 0;
  for (; d <= limit; d++) {
    const p = lineage.parentOf(cur);
    if (p === undefined || p === cur) return d;
    cur = p;
  }
  return d;
}

/** Parent and direct children form a group: a ↔ b when one is the other's parent or they share one. */
export function sameGroup(a: string, b: string, lineage: Lineage): boolean {
  const pa = lineage.parentOf(a);
  const pb = lineage.parentOf(b);
  return pa === b || pb === a || (pa !== undefined && pa === pb);
}

function granted(ix: PolicyIndex, from: string, to: string, channel?: string): boolean {
  return ix.allow.has(key(from, to, channel)) || (channel !== undefined && ix.allow.has(key(from, to)));
}

export function permit(d: Delivery, ix: PolicyIndex, lineage: Lineage): Verdict {
  const p = ix.policy;
  if (d.from === d.to) return { ok: true, rule: 'self' };
  const chan = d.where && 'channel' in d.where ? d.where.channel : undefined;
  if (ix.deny.has(key(d.from, d.to)) || (chan !== undefined && ix.deny.has(key(d.from, `#${chan}`)))) {
    return { ok: false, rule: `deny ${d.from} → ${chan !== undefined ? `#${chan}` : d.to}` };
  }
  // A sender attend cannot place (a hand-written line whose `from` is neither `claude:` nor
  // `external:`) is a stranger: refused everywhere unless the owner granted it by name.
  if (d.fromKind === 'unknown' && !granted(ix, d.from, chan !== undefined ? `#${chan}` : d.where && 'open' in d.where ? '#open' : d.to, chan)) {
    return { ok: false, rule: `${d.from} is a stranger (neither a session nor a person of this bus)` };
  }
  if (d.where && 'channel' in d.where) {
    if (d.where.members.has(d.from)) return { ok: true, rule: `member of #${d.where.channel}` };
    if (d.fromKind === 'human') return { ok: true, rule: 'a human owner posts in any channel' };
    if (granted(ix, d.from, `#${d.where.channel}`)) return { ok: true, rule: `grant ${d.from} → #${d.where.channel}` };
    // Today's behaviour, kept by the default: anyone of this bus may post into a channel.
    if (p.mode === 'family') return { ok: true, rule: "family: one user's bus" };
    return { ok: false, rule: `${d.from} is not a member of #${d.where.channel}` };
  }
  if (d.where && 'open' in d.where) {
    if (p.open === 'everyone') return { ok: true, rule: 'open: everyone posts to #open' };
    if (d.fromKind === 'human') return { ok: true, rule: 'open: humans post to #open' };
    if (p.open === 'humans') return { ok: false, rule: 'open: only humans post to #open' };
    if (granted(ix, d.from, '#open')) return { ok: true, rule: `grant ${d.from} → #open` };
    if (p.open === 'family' && d.fromKind === 'agent') return { ok: true, rule: 'open: family posts to #open' };
    return { ok: false, rule: `open: ${p.open === 'granted' ? `no grant for ${d.from} to post to #open` : `${d.from} is not family`}` };
  }
  if (granted(ix, d.from, d.to, chan)) return { ok: true, rule: `grant ${d.from} → ${d.to}` };
  // The person who owns the bus reaches every node on it: they change grants anyway.
  if (d.fromKind === 'human') return { ok: true, rule: 'a human owner reaches every node' };
  if (sameGroup(d.from, d.to, lineage)) return { ok: true, rule: 'same group' };
  // The bus root is 0700 and owned by one Unix user, so every session and human attend
  // resolves on it is that user's: one family. A sender attend cannot place (a hand-written
  // line whose `from` is neither `claude:` nor `external:`) is a stranger.
  if (p.mode === 'family') return { ok: true, rule: "family: one user's bus" };
  return { ok: false, rule: `no grant from ${d.from} to ${d.to} (different groups)` };
}
