// The one check every surfacing point makes before a message reaches a model or a screen
// (spec §7, issue 14 "Enforcement in every conduit"): the sensor, the drain and the MCP
// channel push (through tools/bus/delivery/ledger.ts takePending), `attend inbox` and chat. A file
// can be written without attend, so the check happens on read, not only at send.
//
// A held message is never shown as from its sender; its owner lists it with
// `attend inbox --held`, with the reason.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Scope, addressees } from '../../wire/envelope.js';
import { type Delivery, FAMILY_POLICY_COMMAND, type Graph, type Lineage, type PolicyIndex, indexPolicy, permit, permitJoin } from '../../wire/permit.js';
import { readChannels } from '../channels/membership.js';
import { readLineage } from './lineage.js';
import { loadPolicy, readPolicy } from './policy.js';
import { refusedError } from '../../wire/errors.js';
import { isNamed } from '../../wire/visibility.js';
import { writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import type { Message } from '../store/messages.js';

/** Who is reading: the gate decides per reader (a grant is from a sender to a reader). */
export interface Reader {
  id: string;
  kind: 'agent' | 'human';
  /**
   * The person of this bus, as the reader's process knows it (the Unix user it runs as):
   * the only local node a `human` line may be from (issue 20 attack 6).
   */
  user: string;
}

export interface Gate {
  /** Why `m` must not be surfaced to the reader, or null when it may be. */
  held(m: Message): string | null;
  /**
   * `held` without the signature check (an Ed25519 verification, ~0.2 ms): for a reader that
   * verifies, before presenting, only what it presents (the drain shows ten messages of a
   * thousand and counts the rest).
   */
  heldByPolicy(m: Message): string | null;
  /**
   * The policy file did not parse: nothing is surfaced, and nothing may be recorded as
   * consumed either, so every message is still delivered once the file is fixed.
   */
  broken(): string | null;
}

/** Where a message sits, as the permission check sees it. */
function whereOf(m: Pick<Message, 'scope'>, members: (channel: string) => ReadonlySet<string>): Delivery['where'] {
  if (m.scope.kind === 'open') return { open: true };
  if (m.scope.kind === 'channel') return { channel: m.scope.name, members: members(m.scope.name) };
  return undefined;
}

/** Channel members by channel, read once, on first need. */
function channelMembers(root: string): (channel: string) => ReadonlySet<string> {
  let members: Map<string, Set<string>> | undefined;
  return (channel) => {
    members ??= new Map(Object.entries(readChannels(root).channels).map(([name, c]) => [name, new Set(Object.keys(c.members))]));
    return members.get(channel) ?? new Set();
  };
}

/** The lineage with its people: the bus owner, and whoever else `person` names. */
function graphOf(lineage: Lineage, owner: string, person: (id: string) => boolean = () => false): Graph {
  return { parentOf: (id) => lineage.parentOf(id), isPerson: (id) => id === owner || person(id) };
}

/** The gate for one reader: the policy, lineage and memberships are read once, lazily. */
export function createGate(root: string, reader: Reader): Gate {
  let ix: PolicyIndex | null | undefined;
  let policyError = '';
  const lineage = readLineage(root);
  const membersOf = channelMembers(root);
  const load = () => {
    if (ix !== undefined) return;
    const r = readPolicy(root);
    if (r.ok) ix = indexPolicy(r.policy);
    else {
      ix = null;
      policyError = r.error;
    }
  };
  return {
    broken() {
      load();
      return ix === null ? `the policy did not parse, so nothing is delivered: ${policyError}` : null;
    },
    held(m) {
      if (m.sig === 'bad') return `bad signature: ${m.sigReason ?? 'does not verify'}`;
      return this.heldByPolicy(m);
    },
    heldByPolicy(m) {
      load();
      const index = ix as PolicyIndex | null;
      // Fail closed: nothing is delivered under a policy that did not parse.
      if (index === null) return `the policy did not parse: ${policyError}`;
      // A line whose tags contradict its `from` field is lying about its sender (issue 20
      // attack 6): its kind comes from `from`, and the contradiction is the reason.
      if (m.mismatch !== undefined) return `the envelope contradicts itself: ${m.mismatch}`;
      // One's own messages are one's own.
      if (m.fromId === reader.id) return null;
      // A person of another machine is one when that machine's key says so (origin.ts sets
      // fromHost only for a signature verified with a key that machine's relay published).
      const graph = graphOf(lineage, reader.user, (id) => (id === m.fromId && m.fromHost !== undefined && m.fromKind === 'human') || (id === reader.id && reader.kind === 'human'));
      const named = isNamed(m, reader.id);
      // In #open, what names the reader is mail to it; for everyone else it is a post to #open.
      if (m.scope.kind === 'open' && named) {
        const v = permit({ from: m.fromId, fromKind: m.fromKind, to: reader.id }, index, graph);
        return v.ok ? null : `refused by policy: ${v.rule}`;
      }
      // The reader is the recipient it checks for; a reader that is not addressed (the
      // owner's chat view of other sessions' mail) checks every addressee.
      const ids = addressees(m.to);
      const targets = ids.length === 0 || named || m.scope.kind === 'open' ? [reader.id] : ids;
      const where = whereOf(m, membersOf);
      for (const to of targets) {
        const v = permit({ from: m.fromId, fromKind: m.fromKind, to, where }, index, graph);
        if (!v.ok) return `refused by policy: ${v.rule}`;
      }
      return null;
    },
  };
}

/** A word of a shell line: `#name` would start a comment unquoted. */
const shellArg = (v: string) => (v.startsWith('#') ? `'${v}'` : v);

/** The one command a person runs to let this through (an allow lifts a matching deny too). */
function grantCommand(from: string, to: string): string {
  return `attend allow ${shellArg(from)} ${shellArg(to)}`;
}

// The default changed in issue 20 (family → groups). A bus with no policy file is told so
// once, by the first refusal under the default, and by `attend doctor` always.
const DEFAULT_TOLD = 'default-policy-told';

function migrationNote(root: string, exists: boolean): string {
  if (exists) return '';
  const marker = join(stateDir(root), DEFAULT_TOLD);
  if (existsSync(marker)) return '';
  try {
    writeFileAtomic(marker, '');
  } catch {
    // a note, not a record: a bus that cannot take the marker says it again next time
  }
  return `; this bus has no policy file, so the default applies: groups (attend's default since it stopped letting every session reach every other; ${FAMILY_POLICY_COMMAND} brings that back)`;
}

/** The policy, lineage and memberships one check at send or join reads, once. */
function sendSide(root: string, who: Reader, people: ReadonlySet<string> = new Set()) {
  const { policy, exists } = loadPolicy(root);
  return {
    ix: indexPolicy(policy),
    graph: graphOf(readLineage(root), who.user, (id) => people.has(id)),
    membersOf: channelMembers(root),
    note: () => migrationNote(root, exists),
  };
}

/**
 * The send-side check (spec §7: refused at send, exit 4, naming the rule and the command
 * that grants). `scopes` are the destination directories; `recipients` the addressed nodes
 * (directed mail), with their kinds, so a person of another machine is reached like the
 * person of this one.
 */
export function checkSend(root: string, sender: Reader, dest: { scopes: Scope[]; recipients: { id: string; kind: 'agent' | 'human' }[] }): void {
  const side = sendSide(root, sender, new Set(dest.recipients.filter((r) => r.kind === 'human').map((r) => r.id)));
  for (const scope of dest.scopes) {
    const where = whereOf({ scope }, side.membersOf);
    const targets = where === undefined ? dest.recipients.map((r) => r.id) : ['open' in where ? '#open' : `#${where.channel}`];
    for (const to of targets) {
      const v = permit({ from: sender.id, fromKind: sender.kind, to, where }, side.ix, side.graph);
      if (!v.ok) throw refusedError(`not allowed by policy: ${v.rule}${side.note()}`, `the human who owns the bus can run: ${grantCommand(sender.id, to)}`);
    }
  }
}

/** May `who` reach `to` directly (an invitation is such a reach)? Refused like a send. */
export function checkReach(root: string, who: Reader, to: { id: string; kind: 'agent' | 'human' }): void {
  const side = sendSide(root, who, new Set(to.kind === 'human' ? [to.id] : []));
  const v = permit({ from: who.id, fromKind: who.kind, to: to.id }, side.ix, side.graph);
  if (!v.ok) throw refusedError(`not allowed by policy: ${v.rule}${side.note()}`, `the human who owns the bus can run: ${grantCommand(who.id, to.id)}`);
}

/** The join check (issue 20 attack 7): refused, exit 4, naming the rule and the grant. */
export function checkJoin(root: string, who: Reader, channel: { name: string; members: Iterable<string>; createdBy?: string | undefined; invited: boolean }): void {
  const side = sendSide(root, who);
  const v = permitJoin({ who: who.id, kind: who.kind, channel: channel.name, members: new Set(channel.members), createdBy: channel.createdBy, invited: channel.invited }, side.ix, side.graph);
  if (!v.ok) {
    throw refusedError(`cannot join #${channel.name}: ${v.rule}${side.note()}`, `a member can run: attend invite ${who.id} ${channel.name}; or the human who owns the bus: ${grantCommand(who.id, `#${channel.name}`)}`);
  }
}
