// Who a message is for (issue 19, "each rule once"): the only place that decides "is this for
// me" and "may this reader see it", and so the only code that compares a message's addressees
// with a reader (test/architecture.test.ts holds the tree to that). Pure.
//
// It reads a small shape that a whole message (tools/bus/store/messages.ts Message,
// tools/wire/party.ts DeliveryMessage) and a listing-cache entry (tools/bus/store/listing.ts
// Entry: the sender and `to`, no body) both satisfy, so a listing that skips a sibling's mail
// by its cache and a reader that opens the message cannot disagree.
//
// Ids are compared as this machine reads them. A message verified as another machine's reads
// with its from_id and addressees localized (tools/wire/hosts.ts, tools/bus/trust/origin.ts):
// `to:laptop:ann` written on box is `ann` on laptop, and box's bare `aaron` is `box:aaron`,
// never laptop's aaron. Readers localize before they ask, the listing cache included; a raw id
// from another machine cannot be told apart from a local one here, so nothing here takes one.
//
// The rules (spec §5, docs/architecture.md "Delivery" and "Listings"):
//   - may see: in #open and a channel, everything (what a reader receives there is decided by
//     the receive set: #open is everyone's, a channel its members'). In a tray, which every
//     session at one origin shares: what names nobody in particular (`*`, `#name`, a legacy
//     line's "this tray"), what names the reader, and what the reader sent; mail to a sibling
//     at the same origin is not the reader's (issue #3 §5). Who reads as the owner of the bus
//     (tools/verbs/inbox.ts lookupMessage) is a question of access, not of this.
//   - named: the reader's id is one of the ids `to` holds.
//   - addressed to: named, or a legacy tray line ("this tray"), which is addressed to the tray
//     and so to whoever receives that tray as its own; asked only of the reader's receive set.
//   - from or to: sent by the reader, or addressed to it (personal, tools/wire/wake.ts; the
//     first link of party, tools/wire/party.ts).
//   - direct mail: mail that names its recipients, which the reader sent or is named in (the
//     chat's direct tab).

import { type Scope, addressees } from './envelope.js';

/**
 * What the rules read of a message. Absent fields are not known: a listing entry outside a
 * tray keeps no sender, and one the cache could not read keeps neither (its message decides).
 */
export interface Addressed {
  /** The sender's id, as this machine reads it. */
  readonly fromId?: string | undefined;
  /** `*`, `#name`, `tray` (a legacy line in a tray) or the addressees' ids, as this machine reads them. */
  readonly to?: string | undefined;
}

// `addressees(m.to ?? '')`: a `to` not known names nobody, as `*`, `#name` and `tray` do.

/**
 * Who in `scope` may see the message: everyone, or these ids (its sender and addressees).
 * Counting by audience (the listing cache's per-party counts) and asking `maySee` agree.
 */
export function audienceOf(scope: Pick<Scope, 'kind'>, m: Addressed): 'everyone' | string[] {
  if (scope.kind !== 'tray') return 'everyone';
  const ids = addressees(m.to ?? '');
  if (ids.length === 0) return 'everyone';
  return [...new Set(m.fromId === undefined ? ids : [m.fromId, ...ids])];
}

/**
 * Whether `reader` may see a message of `scope` that its receive set holds: a sibling's tray
 * mail is not the reader's. A listing entry the cache could not read answers yes: reading it
 * decides.
 */
export function maySee(scope: Pick<Scope, 'kind'>, m: Addressed, reader: string): boolean {
  if (scope.kind !== 'tray' || m.fromId === reader) return true;
  const ids = addressees(m.to ?? '');
  return ids.length === 0 || ids.includes(reader);
}

/** Whether `to` names `reader` among its ids. */
export function isNamed(m: Addressed, reader: string): boolean {
  return addressees(m.to ?? '').includes(reader);
}

/**
 * Whether a message of the reader's receive set is addressed to it: named in `to`, or a
 * legacy line in its tray ("this tray", addressed to the tray and so to the reader).
 */
export function isAddressedTo(m: Addressed, reader: string): boolean {
  return m.to === 'tray' || isNamed(m, reader);
}

/** Sent by `reader`, or addressed to it. */
export function isFromOrTo(m: Addressed, reader: string): boolean {
  return m.fromId === reader || isAddressedTo(m, reader);
}

/** Mail that names its recipients, sent by `reader` or naming it. */
export function isDirectMail(m: Addressed, reader: string): boolean {
  const ids = addressees(m.to ?? '');
  return ids.length > 0 && (ids.includes(reader) || m.fromId === reader);
}
