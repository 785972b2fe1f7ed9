// Subjects on the hub (spec §8). One stream captures `attend.v1.>`:
//
//   attend.v1.<origin>.bcast                  #open
//   attend.v1.<origin>.chan.<name>            a channel
//   attend.v1.<origin>.tray.<host>.<key>      a project tray on one other host
//
// The origin comes first so the server can enforce provenance with one publish allow-list
// per host (`attend.v1.<host>.>`). The subject is routing only: the receiver checks it
// against the envelope's own `to` (tools/relay/inbound.ts). Pure: no IO.

export const SUBJECT_PREFIX = 'attend.v1';
export const STREAM_NAME = 'ATTEND';

export type Target = { kind: 'bcast' } | { kind: 'chan'; name: string } | { kind: 'tray'; host: string; key: string };

export interface Route {
  origin: string;
  target: Target;
}

/**
 * A token may hold only [A-Za-z0-9_-]: `.` separates tokens, `*`, `>` and whitespace mean
 * something to the server. Everything else becomes `~` and two hex digits per UTF-8 byte,
 * so escaping is reversible and two names never share a token.
 */
export function escapeToken(raw: string): string {
  let out = '';
  for (const ch of raw) {
    if (/[A-Za-z0-9_-]/.test(ch)) out += ch;
    else for (const b of new TextEncoder().encode(ch)) out += `~${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

export function unescapeToken(token: string): string | null {
  if (!/^(?:[A-Za-z0-9_-]|~[0-9a-f]{2})+$/.test(token)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < token.length; ) {
    if (token[i] === '~') {
      bytes.push(parseInt(token.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      bytes.push(token.charCodeAt(i));
      i += 1;
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

export function subjectFor(route: Route): string {
  const head = `${SUBJECT_PREFIX}.${escapeToken(route.origin)}`;
  const t = route.target;
  if (t.kind === 'bcast') return `${head}.bcast`;
  if (t.kind === 'chan') return `${head}.chan.${escapeToken(t.name)}`;
  return `${head}.tray.${escapeToken(t.host)}.${escapeToken(t.key)}`;
}

export function parseSubject(subject: string): Route | null {
  const parts = subject.split('.');
  if (parts.length < 4 || `${parts[0]}.${parts[1]}` !== SUBJECT_PREFIX) return null;
  const origin = unescapeToken(parts[2] ?? '');
  if (origin === null) return null;
  const kind = parts[3];
  if (kind === 'bcast' && parts.length === 4) return { origin, target: { kind: 'bcast' } };
  if (kind === 'chan' && parts.length === 5) {
    const name = unescapeToken(parts[4] ?? '');
    return name === null ? null : { origin, target: { kind: 'chan', name } };
  }
  if (kind === 'tray' && parts.length === 6) {
    const host = unescapeToken(parts[4] ?? '');
    const key = unescapeToken(parts[5] ?? '');
    return host === null || key === null ? null : { origin, target: { kind: 'tray', host, key } };
  }
  return null;
}

/** The message id the hub deduplicates on: one per message and destination. */
export function dedupId(id: string, route: Route): string {
  const t = route.target;
  if (t.kind === 'bcast') return `${id}:bcast`;
  if (t.kind === 'chan') return `${id}:chan:${t.name}`;
  return `${id}:tray:${t.host}:${t.key}`;
}

/** Consumer filters for one host: every origin's broadcasts and channels, and its own trays. */
export function consumerFilters(host: string): { suffix: string; filter: string }[] {
  const h = escapeToken(host);
  return [
    { suffix: 'bcast', filter: `${SUBJECT_PREFIX}.*.bcast` },
    { suffix: 'chan', filter: `${SUBJECT_PREFIX}.*.chan.*` },
    { suffix: 'tray', filter: `${SUBJECT_PREFIX}.*.tray.${h}.*` },
  ];
}

export function durableName(host: string, suffix: string): string {
  return `attend-${host}-${suffix}`;
}
