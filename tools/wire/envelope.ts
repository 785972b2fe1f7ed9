// The wire line: one module owns parsing and formatting (docs/architecture.md, "The wire line").
//
//   from|project|cwd|from_kind:agent|from_id:<sid>|to:*|message
//   from|project|cwd|from_kind:human|from_id:aaron|to:<sid>|re:<id>|message
//   from|project|cwd|from_kind:agent|from_id:<sid>|to:<sid>|re:<id>|urgency:urgent|message
//
// Pure: no IO. Every reader and writer in attend goes through here.

type FromKind = 'agent' | 'human';

/**
 * How a message may claim attention (issue 23 §3): `urgent` wakes through every conduit,
 * `quiet` wakes none and waits for the turn boundary; absent is normal, and a normal line is
 * written exactly as before the tag existed.
 */
export type Urgency = 'urgent' | 'quiet';
export const URGENCIES: readonly Urgency[] = ['urgent', 'quiet'];

/** What is on disk, exactly: tags are present only when the line carries them. */
export interface Envelope {
  from: string;
  project: string;
  cwd: string;
  fromKind?: FromKind;
  fromId?: string;
  onBehalfOf?: string;
  to?: string;
  re?: string;
  urgency?: Urgency;
  body: string;
}

/** Where a line sat, which the legacy derivation needs to fill `to`. */
export type Scope =
  | { kind: 'open' }
  | { kind: 'channel'; name: string }
  | { kind: 'tray'; key: string };

/** An envelope with every field derived (docs/architecture.md, "The wire line", "Legacy lines"). */
export interface ResolvedEnvelope {
  from: string;
  project: string;
  cwd: string;
  fromKind: FromKind | 'unknown';
  fromId: string;
  onBehalfOf?: string;
  /** `*`, `#name`, a set of ids, or `tray` for a legacy line in a tray ("this tray"). */
  to: string;
  re?: string;
  urgency?: Urgency;
  body: string;
  legacy: boolean;
  /**
   * Set when the line contradicts itself: a `from_kind` or `from_id` tag that disagrees with
   * the `from` field. Such a line is held by every reader, with this as the reason.
   */
  mismatch?: string;
}

export const SIGNAL_ID_CLASS = /^[A-Za-z0-9_-]+$/;
export const WIDE_CLASS = /^[A-Za-z0-9_@.,:/#*-]+$/;

// The writer's order. `urgency` (issue 23 §3) comes after `re`, not before it: a reader
// that predates a tag stops at it (ADR-401: an unknown tag begins the message), so the
// newest tag goes last and an older reader still takes every tag it knows where it always
// did, `re` included, and shows the rest (`urgency:urgent|…`) as the start of the text.
const TAG_ORDER = ['from_kind', 'from_id', 'on_behalf_of', 'to', 're', 'urgency'] as const;
type Tag = (typeof TAG_ORDER)[number];
const TAG_FIELD: Record<Tag, 'fromKind' | 'fromId' | 'onBehalfOf' | 'to' | 're' | 'urgency'> = {
  from_kind: 'fromKind',
  from_id: 'fromId',
  on_behalf_of: 'onBehalfOf',
  to: 'to',
  re: 're',
  urgency: 'urgency',
};

function isTag(key: string): key is Tag {
  return (TAG_ORDER as readonly string[]).includes(key);
}

function tagValueValid(tag: Tag, value: string): boolean {
  if (tag === 're') return SIGNAL_ID_CLASS.test(value);
  if (tag === 'from_kind') return value === 'agent' || value === 'human';
  if (tag === 'urgency') return (URGENCIES as readonly string[]).includes(value);
  return WIDE_CLASS.test(value);
}

export class WireError extends Error {
  override name = 'WireError';
}

/**
 * Parse one signal line. Never throws: anything that is not a line (fewer than three
 * positional fields) is `null`. Tags are consumed while the key is known, the value fits
 * its class and the key has not been seen yet; the first segment that fails begins the
 * message. The "not seen yet" rule is ours (the note allows any order but never repeats a
 * tag): it lets a body start with a tag-shaped prefix whenever the writer wrote that tag.
 */
export function parseSignal(line: string): Envelope | null {
  if (typeof line !== 'string') return null;
  const a = line.indexOf('|');
  if (a < 0) return null;
  const b = line.indexOf('|', a + 1);
  if (b < 0) return null;
  const c = line.indexOf('|', b + 1);
  if (c < 0) return null;
  const from = line.slice(0, a);
  const project = line.slice(a + 1, b);
  const cwd = line.slice(b + 1, c);
  // Positional fields never hold a newline; a line whose head does is not a signal.
  if (from.length === 0 || /[\n\r]/.test(from + project + cwd)) return null;
  const env: Envelope = { from, project, cwd, body: '' };
  const seen = new Set<Tag>();
  let pos = c + 1;
  for (;;) {
    const bar = line.indexOf('|', pos);
    if (bar < 0) break;
    const seg = line.slice(pos, bar);
    const colon = seg.indexOf(':');
    if (colon < 0) break;
    const key = seg.slice(0, colon);
    const value = seg.slice(colon + 1);
    if (!isTag(key) || seen.has(key) || !tagValueValid(key, value)) break;
    seen.add(key);
    if (key === 'from_kind') env.fromKind = value as FromKind;
    else if (key === 'urgency') env.urgency = value as Urgency;
    else env[TAG_FIELD[key] as 'fromId' | 'onBehalfOf' | 'to' | 're'] = value;
    pos = bar + 1;
  }
  env.body = line.slice(pos);
  return env;
}

/** Would `parseSignal` read the start of `body` as the tag `tag`? */
function bodyStartsWithTag(body: string): Tag | null {
  const bar = body.indexOf('|');
  if (bar < 0) return null;
  const seg = body.slice(0, bar);
  const colon = seg.indexOf(':');
  if (colon < 0) return null;
  const key = seg.slice(0, colon);
  if (!isTag(key)) return null;
  return tagValueValid(key, seg.slice(colon + 1)) ? key : null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a message body cannot be delivered as written, or null. Every front end refuses these
 * at send (issue #10 item 2) because every reader would skip the file forever: a NUL byte
 * makes it binary, and a lone UTF-16 surrogate cannot be written as UTF-8 (it would arrive
 * as U+FFFD, not what was sent). Size is checked by the caller against the bus's limit.
 */
export function bodyProblem(body: string): string | null {
  const nul = body.indexOf('\0');
  if (nul >= 0) return `the message contains a NUL byte (at character ${nul + 1}), which no reader accepts; send text, or a path to a binary file`;
  const bad = LONE_SURROGATE.exec(body);
  if (bad) return `the message is not valid Unicode text (a lone surrogate at character ${bad.index + 1})`;
  return null;
}

/**
 * The longest `on_behalf_of` a writer accepts (issue #10): it is the caller's free claim, shown
 * in every header, so it must not be able to crowd out the message it rides on.
 */
export const MAX_ON_BEHALF_OF = 128;

/** Problems that keep an envelope from being written; empty when it is valid. */
export function envelopeProblems(env: Envelope): string[] {
  const problems: string[] = [];
  if (env.onBehalfOf !== undefined && env.onBehalfOf.length > MAX_ON_BEHALF_OF) {
    problems.push(`on_behalf_of is at most ${MAX_ON_BEHALF_OF} characters (this one has ${env.onBehalfOf.length})`);
  }
  for (const [name, value] of [
    ['from', env.from],
    ['project', env.project],
    ['cwd', env.cwd],
  ] as const) {
    if (/[|\n\r]/.test(value)) problems.push(`${name} contains '|' or a line break`);
  }
  if (env.from.length === 0) problems.push('from is empty');
  for (const tag of TAG_ORDER) {
    const value = env[TAG_FIELD[tag]];
    if (value !== undefined && !tagValueValid(tag, value)) {
      problems.push(`${tag} '${value}' is not a valid value`);
    }
  }
  const clash = bodyStartsWithTag(env.body);
  if (clash && env[TAG_FIELD[clash]] === undefined) {
    problems.push(
      `the message begins with '${clash}:…|', which readers take for a tag; put any text before it`,
    );
  }
  return problems;
}

/** Format one line; throws WireError for an envelope that cannot round-trip. */
export function formatSignal(env: Envelope): string {
  const problems = envelopeProblems(env);
  if (problems.length > 0) throw new WireError(problems.join('; '));
  const parts = [env.from, env.project, env.cwd];
  for (const tag of TAG_ORDER) {
    const value = env[TAG_FIELD[tag]];
    if (value !== undefined) parts.push(`${tag}:${value}`);
  }
  parts.push(env.body);
  return parts.join('|');
}

/** Sanitize a string into the id-ish member class used for humans . */
export function sanitizeMemberId(raw: string): string {
  const cleaned = raw.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[._-]+/, '');
  return cleaned.length > 0 ? cleaned.slice(0, 64) : 'user';
}

/**
 * Who the `from` field says wrote a line: its kind and id (docs/architecture.md, "The wire
 * line"). `claude:<sid>` is a Claude Code session, `agent:<id>` another agent (a known agent
 * CLI or a declared harness), `external:<user>[@<terminal>]` a person; anything else is a
 * sender attend cannot place.
 */
function senderOf(from: string): { kind: FromKind | 'unknown'; id: string } {
  if (from.startsWith('claude:')) return { kind: 'agent', id: from.slice('claude:'.length) };
  if (from.startsWith('agent:')) return { kind: 'agent', id: from.slice('agent:'.length) };
  if (from.startsWith('external:')) return { kind: 'human', id: sanitizeMemberId(from.slice('external:'.length).split('@')[0] ?? '') };
  return { kind: 'unknown', id: from };
}

/**
 * Fill every field, deriving what a legacy line leaves out (docs/architecture.md, "The wire
 * line"). The kind is always the `from` field's (issue 20 attack 6): a `from_kind` tag is
 * only a check, never the answer, and a tag or a `from_id` that disagrees with `from` is
 * recorded as `mismatch`, which every reader holds (tools/bus/trust/gate.ts).
 */
export function resolveEnvelope(env: Envelope, scope: Scope): ResolvedEnvelope {
  const sender = senderOf(env.from);
  const derivedTo =
    scope.kind === 'open' ? '*' : scope.kind === 'channel' ? `#${scope.name}` : 'tray';
  const out: ResolvedEnvelope = {
    from: env.from,
    project: env.project,
    cwd: env.cwd,
    fromKind: sender.kind,
    fromId: env.fromId ?? sender.id,
    to: env.to ?? derivedTo,
    body: env.body,
    legacy: env.fromKind === undefined && env.fromId === undefined && env.to === undefined,
  };
  const mismatch = envelopeMismatch(env, sender);
  if (mismatch !== null) out.mismatch = mismatch;
  if (env.onBehalfOf !== undefined) out.onBehalfOf = env.onBehalfOf;
  if (env.re !== undefined) out.re = env.re;
  if (env.urgency !== undefined) out.urgency = env.urgency;
  return out;
}

const KIND_WORD = { agent: 'an agent', human: 'a person', unknown: 'a sender attend cannot place' } as const;

/** Why the tags contradict the `from` field, or null. */
function envelopeMismatch(env: Envelope, sender: { kind: FromKind | 'unknown'; id: string }): string | null {
  if (env.fromKind !== undefined && env.fromKind !== sender.kind) {
    return `from_kind:${env.fromKind} disagrees with its from field, which is ${KIND_WORD[sender.kind]}`;
  }
  if (env.fromId !== undefined && sender.kind !== 'unknown' && env.fromId !== sender.id) {
    // The from field is free text: named only when it fits the id class, as from_id must.
    return `from_id:${env.fromId} disagrees with its from field, which names ${WIDE_CLASS.test(sender.id) ? sender.id : 'another node'}`;
  }
  return null;
}

/** The ids a `to` value names, or [] for `*`, `#name` and `tray`. */
export function addressees(to: string): string[] {
  if (to === '*' || to === 'tray' || to.startsWith('#')) return [];
  return to.split(',').filter((s) => s.length > 0);
}
