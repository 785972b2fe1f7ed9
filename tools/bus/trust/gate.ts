// The one check every surfacing point makes before a message reaches a model or a screen
// (spec §7, issue 14 "Enforcement in every conduit"): the sensor, the drain and the MCP
// channel push (through tools/bus/delivery/ledger.ts takePending), `attend inbox` and chat. A file
// can be written without attend, so the check happens on read, not only at send.
//
// A held message is never shown as from its sender; its owner lists it with
// `attend inbox --held`, with the reason.

import { type Scope, addressees } from '../../wire/envelope.js';
import { type Delivery, type PolicyIndex, indexPolicy, permit } from '../../wire/permit.js';
import { readChannels } from '../channels/membership.js';
import { readLineage } from './lineage.js';
import { readPolicy, requirePolicy } from './policy.js';
import { refusedError } from '../../wire/errors.js';
import { isNamed } from '../../wire/visibility.js';
import type { Message } from '../store/messages.js';

/** Who is reading: the gate decides per reader (a grant is from a sender to a reader). */
export interface Reader {
  id: string;
  kind: 'agent' | 'human';
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

/** The gate for one reader: the policy, lineage and memberships are read once, lazily. */
export function createGate(root: string, reader: Reader): Gate {
  let ix: PolicyIndex | null | undefined;
  let policyError = '';
  const lineage = readLineage(root);
  let members: Map<string, Set<string>> | undefined;
  const membersOf = (channel: string): ReadonlySet<string> => {
    members ??= new Map(Object.entries(readChannels(root).channels).map(([name, c]) => [name, new Set(Object.keys(c.members))]));
    return members.get(channel) ?? new Set();
  };
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
      // One's own messages are one's own.
      if (m.fromId === reader.id) return null;
      // The reader is the recipient it checks for; a reader that is not addressed (the
      // owner's chat view of other sessions' mail) checks every addressee.
      const ids = addressees(m.to);
      const targets = ids.length === 0 || isNamed(m, reader.id) ? [reader.id] : ids;
      const where = whereOf(m, membersOf);
      for (const to of targets) {
        const v = permit({ from: m.fromId, fromKind: m.fromKind, to, where }, index, lineage);
        if (!v.ok) return `refused by policy: ${v.rule}`;
      }
      return null;
    },
  };
}

/**
 * The send-side check (spec §7: refused at send, exit 4, naming the rule). `where` is the
 * destination directory's kind; `recipients` the addressed ids (directed mail).
 */
export function checkSend(root: string, sender: Reader, dest: { scopes: Scope[]; recipients: string[] }): void {
  const ix = indexPolicy(requirePolicy(root));
  const lineage = readLineage(root);
  let members: Map<string, Set<string>> | undefined;
  const membersOf = (channel: string): ReadonlySet<string> => {
    members ??= new Map(Object.entries(readChannels(root).channels).map(([name, c]) => [name, new Set(Object.keys(c.members))]));
    return members.get(channel) ?? new Set();
  };
  for (const scope of dest.scopes) {
    const where = whereOf({ scope }, membersOf);
    const targets = where === undefined ? dest.recipients : [where && 'open' in where ? '*' : `#${scope.kind === 'channel' ? scope.name : ''}`];
    for (const to of targets) {
      const v = permit({ from: sender.id, fromKind: sender.kind, to, where }, ix, lineage);
      if (!v.ok) throw refusedError(`not allowed by policy: ${v.rule}`, `the human who owns the bus can run: attend allow ${sender.id} ${to}`);
    }
  }
}
