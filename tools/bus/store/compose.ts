// The one place an envelope is built from a resolved identity (docs/architecture.md, "The wire line": `from_kind` and
// `from_id` are written by attend from the identity, never chosen by a caller). Every writer
// — send, reply, the channel notices, chat — goes through here.

import type { Identity } from '../../identity/resolve.js';
import type { Envelope, Urgency } from '../../wire/envelope.js';
import { projectOf } from '../../wire/names.js';

/** A path with `|` or a line break would split the line; these fields are display only. */
function positional(text: string): string {
  return text.replace(/[|\r\n]/g, '_');
}

export function envelopeFrom(who: Identity, fields: { to: string; body: string; re?: string | undefined; onBehalfOf?: string | undefined; urgency?: Urgency | undefined }): Envelope {
  const env: Envelope = {
    from: who.from,
    project: positional(projectOf(who.origin)),
    cwd: positional(who.origin),
    fromKind: who.kind,
    fromId: who.id,
    to: fields.to,
    body: fields.body,
  };
  if (fields.onBehalfOf !== undefined) env.onBehalfOf = fields.onBehalfOf;
  if (fields.re !== undefined) env.re = fields.re;
  if (fields.urgency !== undefined) env.urgency = fields.urgency;
  return env;
}
