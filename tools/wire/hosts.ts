// Parties across machines (issue 13): which ids are global and how an id written on one
// machine reads on another. Pure.
//
// The rule. A Claude Code session id is global: the same session is the same id on every
// machine. Every other id (a human's username, a declared agent's id) is local to the
// machine it lives on: `aaron` on box is not `aaron` on laptop. On any other machine such a
// party is the qualified id `<host>:<id>` (`box:aaron`), the form `--to host:name` already
// takes. No local id holds `:` (usernames are sanitised to [A-Za-z0-9_.-], declared agents
// to names and `@`), so a qualified id never collides with a local one, and it stays in the
// envelope's value class. It is shown `aaron@box`.
//
// Bytes on disk never change across machines (ids, signatures): a message from box that says
// `from_id:aaron|to:laptop:ann` is READ on laptop as from `box:aaron` to `ann`.

/** `[a-z0-9-]{1,32}`: a relay's host name (tools/relay/config.ts HOST_CLASS). */
const HOST = /^[a-z0-9-]{1,32}$/;
const QUALIFIED = /^([a-z0-9-]{1,32}):(.+)$/;
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Claude Code session id: the same party on every machine. */
export function isGlobalId(id: string): boolean {
  return SESSION_ID.test(id);
}

/** `box:aaron` → { host: 'box', id: 'aaron' }; null for an unqualified id. */
export function splitQualified(id: string): { host: string; id: string } | null {
  const m = QUALIFIED.exec(id);
  return m ? { host: m[1]!, id: m[2]! } : null;
}

/** The id of party `id` of machine `host` as every other machine names it. */
export function qualifyId(id: string, host: string): string {
  if (isGlobalId(id) || splitQualified(id) !== null || !HOST.test(host)) return id;
  return `${host}:${id}`;
}

/**
 * How an id written on machine `from` reads on machine `local`: a session id as it is; a
 * bare id is `from`'s party (`from:id`); `local:x` is this machine's `x`; `other:x` stays.
 */
export function localizeId(id: string, from: string, local: string | null): string {
  if (isGlobalId(id)) return id;
  const q = splitQualified(id);
  if (q) return local !== null && q.host === local ? q.id : id;
  return qualifyId(id, from);
}

/** `to` as read on `local` when it was written on `from`: addressee lists only. */
export function localizeTo(to: string, from: string, local: string | null): string {
  if (to === '*' || to === 'tray' || to.startsWith('#')) return to;
  return to
    .split(',')
    .map((id) => (id.length > 0 ? localizeId(id, from, local) : id))
    .join(',');
}

/** A qualified id as people read it: `box:aaron` → `aaron@box`; anything else as it is. */
export function displayId(id: string): string {
  const q = splitQualified(id);
  return q ? `${q.id}@${q.host}` : id;
}
