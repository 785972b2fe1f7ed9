// A hint (tools/wire/errors.ts) in chat's own terms: the slash command for a verb that has
// one, else the CLI line (a human at the chat can run it in another terminal).

import { AttendError, type Hint, type HintVerb, hintForCli } from '../wire/errors.js';

const SLASH: Partial<Record<HintVerb, string>> = {
  join: 'join',
  leave: 'leave',
  channels: 'channels',
  create: 'create',
  describe: 'describe',
  invite: 'invite',
  kick: 'kick',
  dissolve: 'dissolve',
  purge: 'purge',
  peers: 'peers',
  reply: 'reply',
};

/** Channel arguments read `#ops` in chat, people `@name`. */
function chatArg(name: string, value: string): string {
  if (name === 'channel') return value.startsWith('#') ? value : `#${value}`;
  if (name === 'who') return value.startsWith('@') ? value : `@${value}`;
  return value;
}

function hintForChat(h: Hint): string {
  if ('text' in h) return h.text;
  if (h.verb === 'send') return `type a message and press Enter${h.then ? `; that ${h.then}` : ''}`;
  const slash = SLASH[h.verb];
  if (!slash) return hintForCli(h);
  // Flags that have no slash form are dropped with their meaning kept in `then`.
  const flags = (h.flags ?? []).filter((f) => f === 'force').map((f) => `--${f}`);
  const words = [`/${slash}`, ...(h.args ?? []).map(([n, v]) => chatArg(n, v)), ...flags];
  return `${words.join(' ')}${h.then ? ` ${h.then}` : ''}`;
}

/** An error as one status line: the message, and the hint in chat's own terms. */
export function errorLine(err: unknown): string {
  const e = err as Error;
  const hint = err instanceof AttendError ? err.hint : undefined;
  return `${e?.message ?? String(err)}${hint ? ` (${hintForChat(hint)})` : ''}`;
}
