// Names on the bus: tray keys, channel names, nicknames. Pure.

/** Java-style 32-bit string hash over UTF-16 units: `h = (h*31 + unit) | 0`. */
function hashPath(path: string): number {
  let h = 0;
  for (let i = 0; i < path.length; i++) h = (h * 31 + path.charCodeAt(i)) | 0;
  return h;
}

/**
 * Claude Code's project slug of a path: every UTF-16 unit outside [A-Za-z0-9] becomes
 * `-`; a slug over 200 characters is cut to 200 and followed by `-` and base36(|h|).
 * This equals the folder name under ~/.claude/projects/ (docs/architecture.md, "The bus on disk").
 */
export function projectSlug(path: string): string {
  const slug = path.replace(/[^A-Za-z0-9]/g, '-');
  if (slug.length <= 200) return slug;
  return `${slug.slice(0, 200)}-${Math.abs(hashPath(path)).toString(36)}`;
}

/** The attend key that names a project's tray: slug, `-`, base36(|h|). */
export function attendKey(path: string): string {
  return `${projectSlug(path)}-${Math.abs(hashPath(path)).toString(36)}`;
}

/** The slug part of an attend key (everything before the last `-`). */
export function slugOfKey(key: string): string {
  const i = key.lastIndexOf('-');
  return i <= 0 ? key : key.slice(0, i);
}

const CHANNEL_CLASS = /^[A-Za-z0-9_.-]+$/;
const RESERVED_CHANNELS = new Set(['open', 'broadcast']);
export const MAX_CHANNEL_NAME = 64;

/**
 * Check a channel name, with or without its leading `#`. Returns the bare name, or a
 * reason it is refused. `open` is the commons and is not a channel directory.
 *
 * Names are case-insensitive and stored lowercase (issue #10): `Ops` and `ops` would be one
 * directory on a case-insensitive filesystem and two elsewhere, so they are one channel
 * everywhere. A name begins with a letter or digit (`.x` is a hidden file, `-x` reads as a
 * flag, `_x` is attend's own namespace) and never holds `..`.
 */
export function parseChannelName(raw: string): { ok: true; name: string } | { ok: false; reason: string } {
  const given = raw.startsWith('#') ? raw.slice(1) : raw;
  if (given.length === 0) return { ok: false, reason: 'channel name is empty' };
  if (given.length > MAX_CHANNEL_NAME) {
    return { ok: false, reason: `channel name is longer than ${MAX_CHANNEL_NAME} characters` };
  }
  if (!CHANNEL_CLASS.test(given)) {
    return { ok: false, reason: `channel name '${printable(given)}' may only use A-Z a-z 0-9 _ . -` };
  }
  const name = given.toLowerCase();
  if (!/^[a-z0-9]/.test(name)) return { ok: false, reason: `channel name '${given}' must begin with a letter or a digit` };
  if (name.includes('..')) return { ok: false, reason: `channel name '${given}' may not contain '..'` };
  if (RESERVED_CHANNELS.has(name)) return { ok: false, reason: `'${name}' is reserved (#open is the commons)` };
  return { ok: true, name };
}

/** A short, visible rendering of untrusted text for an error line. */
export function printable(text: string, max = 60): string {
  const shown = JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  return shown.slice(1, -1);
}

// What a party is called (issue "The first hour", item 2): a name that says what it is, given
// once when it first appears and kept for its life (docs/architecture.md, "Names"). A session
// is called by Claude Code's own name for it when it has one, else `claude-<project>`; another
// agent by its CLI or harness and its project (`codex-api`, `gemini-api`). Made unique among
// the live with a suffix (`codex-api-2`) at the moment it is given, and never changed because
// someone else arrived: a later arrival takes the next free suffix instead.

/** A word of a name: lowercase `[a-z0-9-]`, no leading, trailing or doubled `-`, at most `max` long. */
export function nameToken(text: string, max = 32): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/, '');
}

/**
 * The agent CLI or harness an agent id names, from its prefix: `codex-<pid36>.<start36>` (a
 * known CLI, tools/identity/resolve.ts) → `codex`; `<name>[.<instance>]@<user>` (a declared
 * harness) → `<name>`; `<name>-<instance>` (a declared harness with an instance, the older
 * form) → the part before the first `-`; a session id → `claude`.
 */
export function harnessOf(id: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return 'claude';
  const at = id.indexOf('@');
  if (at > 0) return nameToken(id.slice(0, at).split('.')[0] ?? '') || 'agent';
  const cli = /^([a-z0-9-]+?)-[0-9a-z]+\.[0-9a-z]+$/.exec(id);
  if (cli) return nameToken(cli[1]!) || 'agent';
  return nameToken(id.split(/[-.]/)[0] ?? '') || 'agent';
}

/** What a local agent's name is made from: its own name (Claude Code's), else `<harness>-<project>`. */
export function nameBase(p: { id: string; origin: string; own?: string | undefined }): string {
  if (p.own !== undefined && p.own.trim().length > 0) return p.own.trim();
  // The roster asks for every live party on every pass: remembered, as a pure function may be.
  const key = `${p.id}\u0000${p.origin}`;
  let base = bases.get(key);
  if (base === undefined) {
    base = `${harnessOf(p.id)}-${nameToken(projectOf(p.origin), 24) || 'root'}`;
    if (bases.size >= 10_000) bases.clear();
    bases.set(key, base);
  }
  return base;
}

const bases = new Map<string, string>();

/** `base`, else `base-2`, `base-3`, ...: the first that `taken` (a lowercased name) refuses not. */
export function uniqueName(base: string, taken: (lower: string) => boolean): string {
  if (!taken(base.toLowerCase())) return base;
  for (let i = 2; ; i++) {
    const name = `${base}-${i}`;
    if (!taken(name.toLowerCase())) return name;
  }
}

/** A name as recorded: the name, what it was made from, since when, and every earlier name. */
export interface GivenName {
  name: string;
  base: string;
  since: number;
  aliases: string[];
}

/** A party to name this pass, with the name it was given before (if any) and whether it is live. */
export interface NameRequest {
  id: string;
  base: string;
  had?: GivenName | undefined;
  /** A name it had before names were given (an ordinal, `Abe-alpha`): kept as an earlier name. */
  legacy?: string | undefined;
}

/** At most this many earlier names are kept per party (the oldest go first). */
export const MAX_ALIASES = 16;

/**
 * Give names. `parties` are the live local agents of this pass; `held(lower)` lists who else
 * holds a name (as its name or an alias): the live, and those seen lately (so two processes
 * whose views of the live differ still agree). A party keeps the name it had while its base
 * is the same; two live parties that share a name (one came back after the name was given to
 * another) are told apart by giving it to the one that got it last, which is the one that was
 * live when it did, and naming the other anew. Returns the names, and which ones are new.
 */
export function giveNames(parties: NameRequest[], held: (lower: string) => Iterable<string>, now: number): Map<string, { given: GivenName; changed: boolean }> {
  const out = new Map<string, { given: GivenName; changed: boolean }>();
  const kept = parties.filter((p) => p.had !== undefined && p.had.base === p.base);
  const byName = new Map<string, NameRequest[]>();
  for (const p of kept) {
    const k = p.had!.name.toLowerCase();
    byName.set(k, [...(byName.get(k) ?? []), p]);
  }
  for (const list of byName.values()) {
    list.sort((a, b) => b.had!.since - a.had!.since || a.id.localeCompare(b.id));
    out.set(list[0]!.id, { given: list[0]!.had!, changed: false });
  }
  const mine = new Map<string, Set<string>>();
  const claim = (id: string, g: GivenName) => {
    for (const n of [g.name, ...g.aliases]) {
      const k = n.toLowerCase();
      mine.set(k, new Set([...(mine.get(k) ?? []), id]));
    }
  };
  for (const [id, v] of out) claim(id, v.given);
  const fresh = parties.filter((p) => !out.has(p.id)).sort((a, b) => (a.had?.since ?? Infinity) - (b.had?.since ?? Infinity) || a.id.localeCompare(b.id));
  for (const p of fresh) {
    const name = uniqueName(p.base, (k) => {
      for (const owner of held(k)) if (owner !== p.id) return true;
      for (const owner of mine.get(k) ?? []) if (owner !== p.id) return true;
      return false;
    });
    const before = p.had ? [...p.had.aliases, p.had.name] : p.legacy !== undefined ? [p.legacy] : [];
    const aliases = [...new Set(before.filter((n) => n !== name))].slice(-MAX_ALIASES);
    const given: GivenName = { name, base: p.base, since: now, aliases };
    out.set(p.id, { given, changed: true });
    claim(p.id, given);
  }
  return out;
}

/** Last non-empty path segment, for the wire's display-only `project` field. */
export function projectOf(origin: string): string {
  const parts = origin.split(/[\\/]/).filter((p) => p.length > 0);
  return parts[parts.length - 1] ?? '/';
}

/** Levenshtein distance, capped: returns `cap + 1` as soon as it must exceed `cap`. */
export function editDistance(a: string, b: string, cap = 2): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > cap) return cap + 1;
    prev = cur;
  }
  return prev[b.length] ?? cap + 1;
}
