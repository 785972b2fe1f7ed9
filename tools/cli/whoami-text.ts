// `attend whoami` as text: one function for the full CLI (cli.ts) and the fast path
// (fast-send.ts), so the two never disagree. The name, origin and status come from a session
// record: shown as data.

import type { WhoamiResult } from '../verbs/whoami.js';
import { neutralize } from '../wire/render.js';
import { clockTime } from '../wire/attention.js';

export function whoamiText(r: WhoamiResult): string {
  return [
    `${neutralize(r.displayName)} (${r.kind})`,
    `id:       ${r.id}`,
    `from:     ${r.from}`,
    `origin:   ${neutralize(r.origin)}`,
    `resolved: ${r.resolved ? 'yes' : 'no'} (${r.reason})`,
    ...(r.status ? [`status:   ${neutralize(r.status)}`] : []),
    ...(r.focusUntil !== null ? [`focus:    until ${clockTime(r.focusUntil)} (only urgent messages and people wake it)`] : []),
    ...(r.followedClear ? ['note:     followed a /clear to the new session id'] : []),
    `parent:   ${r.parent ?? '(none recorded)'}`,
    `group:    ${[r.parent, r.id, ...r.group.siblings].filter((x) => x !== null).join(', ')}${r.group.children.length > 0 ? `; leads ${r.group.children.join(', ')}` : ''}`,
    `bus:      ${neutralize(r.busRoot)}`,
  ].join('\n');
}
