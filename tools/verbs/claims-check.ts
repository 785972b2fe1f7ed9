// Who holds a file (issue 23 §2), and the words that tell a model so: shared by `attend claims
// --check`, the PreToolUse hook's fast path (tools/cli/fast-claims.ts) and the MCP tool. No
// zod and no verb context here: the hook runs before every edit, within 1.3× `node -e 0`.

import { type Claim, claimsOn, type FileKey, keyOf, liveClaims } from '../bus/claims/index.js';
import { neutralize } from '../wire/render.js';
import { printable } from '../wire/names.js';

/** What the PreToolUse hook does about a held file (the policy's `claims`): tell the model, ask the person, or refuse the call. */
export type ClaimsMode = 'warn' | 'ask' | 'deny';

export interface FileHolders {
  path: string;
  key: FileKey;
  /** Live claims by others on the file, oldest first. */
  claims: Claim[];
}

/** For each path, the live claims others hold on it; `me` (a party id) holds nothing against itself. */
export function checkFiles(root: string, paths: string[], opts: { cwd: string; me: string | null; now: number }): FileHolders[] {
  // No claims on the bus (the usual case): nothing to key, no git to ask.
  const live = liveClaims(root, opts.now);
  return paths.map((path) => {
    if (live.length === 0) return { path, key: { project: '', worktree: '', rel: path }, claims: [] };
    const key = keyOf(root, path, opts.cwd);
    return { path, key, claims: claimsOn(live, key, opts.me) };
  });
}

const minutes = (ms: number) => (ms < 60_000 ? 'under a minute' : `${Math.round(ms / 60_000)} min`);

/** One line per holder: who, since when, until when, why. Hostile text is rendered as data. */
export function describeHolder(c: Claim, now: number): string {
  const who = `${neutralize(c.holder.name)} (${c.holder.kind}${c.holder.kind === 'agent' ? `, session ${printable(c.holder.id, 40)}` : ''})`;
  const why = c.reason ? ` — reason: "${neutralize(c.reason)}"` : ' — no reason given';
  return `${who} holds ${neutralize(c.pattern)} (claimed ${minutes(now - c.at)} ago, ${minutes(c.expires - now)} left)${why}`;
}

/** How to ask a holder: the command a model or a person runs. */
export function askCommand(c: Claim): string {
  return `attend send --to ${JSON.stringify(c.holder.name)} "…"`;
}

/** What the model is told before it edits a file others hold (the PreToolUse hook's context or reason). */
export function holdWarning(held: FileHolders[], now: number, mode: ClaimsMode): string {
  const lines = ['attend: another live party has claimed a file this tool call changes.'];
  for (const h of held) {
    for (const c of h.claims) lines.push(`- ${neutralize(h.path)}: ${describeHolder(c, now)}. Ask them first: ${askCommand(c)}`);
  }
  lines.push(
    mode === 'deny'
      ? 'The person who runs this bus made claims a hard stop (attend policy --claims deny): the call was not run. Ask the holder to release the file (attend release), or work on something else.'
      : mode === 'ask'
        ? 'The person is asked whether this call goes ahead (attend policy --claims ask). Coordinate with the holder either way.'
        : 'A claim is advisory, so this call was not stopped, but the file is theirs for now: ask the holder before you change it further, tell them what you changed (or undo it), or work on another file. `attend claims` lists what is held.',
  );
  return lines.join('\n');
}

/** What each live party holds (its patterns), for `attend peers`. */
export function holdingsOf(root: string, now: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of liveClaims(root, now)) out.set(c.holder.id, [...(out.get(c.holder.id) ?? []), c.pattern]);
  return out;
}
