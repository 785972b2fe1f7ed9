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

// Stable nicknames for sessions with no Claude Code name (docs/architecture.md, "Identity"): a given-name-like word
// chosen by the origin path's hash, so the same project always reads the same.
const NICKS = [
  'Ada', 'Bo', 'Cai', 'Dov', 'Eli', 'Fay', 'Gil', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lev', 'Mia', 'Nick',
  'Ola', 'Pia', 'Quin', 'Rui', 'Sol', 'Tam', 'Uma', 'Vic', 'Wen', 'Xia', 'Yuri', 'Zoe', 'Abe', 'Bea',
  'Cy', 'Dee', 'Edo', 'Fen', 'Gus', 'Hal', 'Ira', 'Jo', 'Kit', 'Lux', 'Max', 'Ned', 'Oki', 'Pax',
  'Rex', 'Sam', 'Teo', 'Val', 'Wim', 'Zed',
];

export function nicknameFor(origin: string): string {
  return NICKS[Math.abs(hashPath(origin)) % NICKS.length] ?? 'Sam';
}

const ORDINALS = [
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda',
  'mu', 'nu', 'xi', 'omicron', 'pi', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'chi', 'psi', 'omega',
];

export function ordinalName(index: number): string {
  return ORDINALS[index] ?? `n${index + 1}`;
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
