// Who may send to whom (spec §7, seed 000 D3–D5, issues 14 §2 and 20). Pure: the policy, the
// lineage and the channel memberships come in as data; one call decides one message for one
// reader in O(depth) lookups in hash sets and maps, so 1,000 grants cost what 1 does.
//
// Rules, first match wins:
//   1. a message to or from oneself is allowed;
//   2. an explicit deny (from → to, or from → #channel) refuses; so does a stranger (a
//      sender attend cannot place, or one that claims to be a person and is not the person
//      of this bus) that has no grant by name;
//   3. a channel: its members post and read there (membership is the grant), and so does
//      a person; a grant to `#name` lets a non-member post; in mode `family` anyone may;
//   4. #open (`*`): who may post is `open` in the policy (everyone | family | top | humans |
//      granted); a person always may;
//   5. a grant (from → to, or `--both`) allows; a person reaches, and is reached by, every
//      node (a person is not a model to inject into, and changes the grants anyway);
//   6. the same group (a parent and its direct children, both ways, siblings too) allows;
//   7. mode `family`: every session and person of this bus (one Unix user's) is family;
//      mode `groups` (the default, seed 000 D4): nothing else;
//   8. anything else is refused, naming the rule.

type OpenPost = 'everyone' | 'family' | 'top' | 'humans' | 'granted';
type Mode = 'family' | 'groups';

export interface Grant {
  from: string;
  to: string;
  /** A grant for one channel only (`attend allow a b --channel ops`). */
  channel?: string | undefined;
}

export interface Policy {
  version: 1;
  /** `groups` (the default) is seed 000 D4's model; `family` lets every node of the bus reach every other. */
  mode: Mode;
  /**
   * Who posts to #open (every node reads it). `top`, the default: people and the sessions a
   * person started, so a spawned worker cannot reach every session by default (issue 20).
   */
  open: OpenPost;
  /** The deepest lineage a policy lets grow (seed 000 D5: a number, never a structure). */
  maxDepth: number;
  allow: Grant[];
  deny: Grant[];
  /**
   * What the PreToolUse hook does before an edit of a file another live party claims (issue
   * 23 §2): `warn` (the default) tells the model, `ask` asks the person, `deny` refuses the call.
   */
  claims?: 'warn' | 'ask' | 'deny';
}

/**
 * The policy of a bus with no policy file (seed 000 D4, issue 20): groups, and #open posted by
 * people and top-level sessions. Before issue 20 it was `family` / `everyone`; a person who
 * wants that back writes it (`attend policy --mode family --open everyone`).
 */
export const DEFAULT_POLICY: Policy = { version: 1, mode: 'groups', open: 'top', maxDepth: 8, allow: [], deny: [] };

/** The settings that were the default before issue 20, for the migration hint. */
export const FAMILY_POLICY_COMMAND = 'attend policy --mode family --open everyone';

export interface Lineage {
  /** The recorded parent of a node (a session id or a human id); undefined when unknown. */
  parentOf(id: string): string | undefined;
}

/** The lineage, plus who among its nodes is a person (the bus owner; a person of another machine). */
export interface Graph extends Lineage {
  isPerson(id: string): boolean;
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

/**
 * The kind the rules go by: a person only when the graph says so (the person who owns the bus,
 * or a person of another machine verified with that machine's key). Any other `human` is a
 * claim attend cannot back, so a stranger (issue 20 attack 6).
 */
function kindOf(d: Delivery, graph: Graph): Delivery['fromKind'] {
  return d.fromKind === 'human' && !graph.isPerson(d.from) ? 'unknown' : d.fromKind;
}

/** Where a grant for this delivery points: the channel, #open, or the recipient. */
function grantTarget(d: Delivery): string {
  if (d.where && 'channel' in d.where) return `#${d.where.channel}`;
  if (d.where && 'open' in d.where) return '#open';
  return d.to;
}

export function permit(d: Delivery, ix: PolicyIndex, graph: Graph): Verdict {
  const p = ix.policy;
  if (d.from === d.to) return { ok: true, rule: 'self' };
  const chan = d.where && 'channel' in d.where ? d.where.channel : undefined;
  if (ix.deny.has(key(d.from, d.to)) || (chan !== undefined && ix.deny.has(key(d.from, `#${chan}`)))) {
    return { ok: false, rule: `deny ${d.from} → ${chan !== undefined ? `#${chan}` : d.to}` };
  }
  const kind = kindOf(d, graph);
  // A stranger is refused everywhere unless the owner granted it by name: a sender attend
  // cannot place (a hand-written line whose `from` is not `claude:`, `agent:` or
  // `external:`), or one that claims to be a person and is not the person of this bus.
  if (kind === 'unknown' && !granted(ix, d.from, grantTarget(d), chan)) {
    return {
      ok: false,
      rule: d.fromKind === 'human' ? `${d.from} claims to be a person, but is not the person of this bus (a stranger)` : `${d.from} is a stranger (neither a session, an agent nor a person of this bus)`,
    };
  }
  if (d.where && 'channel' in d.where) {
    if (d.where.members.has(d.from)) return { ok: true, rule: `member of #${d.where.channel}` };
    if (kind === 'human') return { ok: true, rule: 'a person posts in any channel' };
    if (granted(ix, d.from, `#${d.where.channel}`)) return { ok: true, rule: `grant ${d.from} → #${d.where.channel}` };
    if (p.mode === 'family') return { ok: true, rule: "family: one user's bus" };
    return { ok: false, rule: `${d.from} is not a member of #${d.where.channel}` };
  }
  if (d.where && 'open' in d.where) return permitOpen(d.from, kind, ix, graph);
  if (granted(ix, d.from, d.to, chan)) return { ok: true, rule: `grant ${d.from} → ${d.to}` };
  // A person reaches every node (they change the grants anyway) and is reached by every node
  // (a person is not a model to inject into).
  if (kind === 'human') return { ok: true, rule: 'a person reaches every node' };
  if (graph.isPerson(d.to)) return { ok: true, rule: 'every node reaches a person' };
  if (sameGroup(d.from, d.to, graph)) return { ok: true, rule: 'same group' };
  // The bus root is 0700 and owned by one Unix user, so every session and person attend
  // resolves on it is that user's: one family, when the person chose it.
  if (p.mode === 'family') return { ok: true, rule: "family: one user's bus" };
  return { ok: false, rule: `no grant from ${d.from} to ${d.to} (different groups)` };
}

/** Who posts to #open (every node reads it): the `open` setting; a person always may. */
function permitOpen(from: string, kind: Delivery['fromKind'], ix: PolicyIndex, graph: Graph): Verdict {
  const open = ix.policy.open;
  if (open === 'everyone') return { ok: true, rule: 'open: everyone posts to #open' };
  if (kind === 'human') return { ok: true, rule: 'open: a person posts to #open' };
  if (granted(ix, from, '#open')) return { ok: true, rule: `grant ${from} → #open` };
  if (open === 'family') return { ok: true, rule: 'open: family posts to #open' };
  if (open === 'top') {
    // A session a person started speaks to everyone, as the person could; a node started by
    // a session (a worker, which its lead may have fed anything) speaks only to its group.
    const parent = graph.parentOf(from);
    if (parent !== undefined && graph.isPerson(parent)) return { ok: true, rule: 'open: a top-level session posts to #open' };
    return {
      ok: false,
      rule: `open: only people and top-level sessions post to #open, and ${from} ${parent === undefined ? 'has no recorded parent' : `was started by ${parent}, not by a person`}`,
    };
  }
  if (open === 'humans') return { ok: false, rule: 'open: only humans post to #open' };
  return { ok: false, rule: `open: no grant for ${from} to post to #open` };
}

export interface Join {
  who: string;
  kind: 'agent' | 'human';
  channel: string;
  members: ReadonlySet<string>;
  createdBy?: string | undefined;
  /** The joiner holds an invitation to the channel (`attend invite`). */
  invited: boolean;
}

/**
 * May `who` join an existing channel (issue 20 attack 7)? Membership is the grant to read and
 * post there, so in mode `groups` joining needs an invitation, a grant to the channel, or a
 * member of the joiner's own group already inside (or its maker, for a channel made and left
 * empty); otherwise any node could reach another group by joining its channel. A person joins
 * anything; a deny to the channel refuses.
 */
export function permitJoin(j: Join, ix: PolicyIndex, graph: Graph): Verdict {
  if (j.members.has(j.who)) return { ok: true, rule: `already a member of #${j.channel}` };
  if (ix.deny.has(key(j.who, `#${j.channel}`))) return { ok: false, rule: `deny ${j.who} → #${j.channel}` };
  if (j.kind === 'human' && graph.isPerson(j.who)) return { ok: true, rule: 'a person joins any channel' };
  if (j.invited) return { ok: true, rule: `invited to #${j.channel}` };
  if (granted(ix, j.who, `#${j.channel}`)) return { ok: true, rule: `grant ${j.who} → #${j.channel}` };
  if (j.createdBy === j.who) return { ok: true, rule: `the creator of #${j.channel}` };
  if (ix.policy.mode === 'family') return { ok: true, rule: "family: one user's bus" };
  for (const m of j.members) if (sameGroup(j.who, m, graph)) return { ok: true, rule: `${m}, of ${j.who}'s group, is a member of #${j.channel}` };
  // A channel made and left empty (`attend channels create`) is its maker's room: its group may come in.
  if (j.createdBy !== undefined && sameGroup(j.who, j.createdBy, graph)) return { ok: true, rule: `${j.createdBy}, of ${j.who}'s group, made #${j.channel}` };
  return { ok: false, rule: `#${j.channel} has no member of ${j.who}'s group, and ${j.who} has no invitation or grant to it` };
}
