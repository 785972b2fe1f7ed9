// The one error class. Every failure a user can cause or meet carries an exit code from
// the documented map and, where it helps, a hint. Callers branch on the code, never on the
// text. The hint is data (a verb and its arguments, or plain advice): each front end words
// it in its own terms — `attend join ops` in the CLI, `/join #ops` in chat, the `join` tool
// in MCP (issue #9 §1) — so no front end rewrites another's wording.

/**
 * The exit-code map, the one source for `--help`, docs/reference.md and the README table
 * (scripts/gen-reference.mjs writes both; test/docs.test.ts fails when they drift).
 */
export const EXIT_CODES = [
  { code: 0, name: 'ok', meaning: 'ok' },
  { code: 1, name: 'notFound', meaning: 'not found: no known recipient, unknown message, channel or member' },
  { code: 2, name: 'usage', meaning: 'usage: unknown flag, bad argument, invalid name or id, empty or undeliverable message (a NUL byte), no TTY for chat' },
  { code: 3, name: 'bus', meaning: 'the bus cannot be used: foreign, symlinked or group/world-writable root or scope directory, a relative ATTEND_HOME, a full disk, an unreadable directory in a listing, an IO failure' },
  { code: 4, name: 'refused', meaning: 'refused by a rule: not allowed for you, needs `--force`, a message over 64 KiB, a card that does not verify' },
  { code: 5, name: 'environment', meaning: 'environment: something needed is missing (a session, a TTY, a binary)' },
  { code: 6, name: 'timeout', meaning: 'timeout: a wait (`attend ask`, `send --wait`) ended with no reply, or shown to nobody it is for; the message was sent and stays' },
  { code: 7, name: 'held', meaning: 'held: another live party claims the file (attend claims --check, attend claim)' },
  { code: 70, name: 'internal', meaning: 'internal error: a bug in attend (the message says where to report it)' },
] as const;

type ExitName = (typeof EXIT_CODES)[number]['name'];

export const EXIT = Object.fromEntries(EXIT_CODES.map((e) => [e.name, e.code])) as { readonly [K in ExitName]: Extract<(typeof EXIT_CODES)[number], { name: K }>['code'] };

type ExitCode = (typeof EXIT_CODES)[number]['code'];

/** One line for `--help`: `0 ok, 1 not found, ...`. */
export function exitCodesLine(): string {
  return EXIT_CODES.map((e) => `${e.code} ${e.meaning.split(':')[0]}`).join(', ');
}

export const REPORT_URL_HINT = 'this is a bug in attend; please report it with the command you ran (attend --version)';

/** The verbs a hint can name; each front end knows how to say each one. */
export type HintVerb =
  | 'send'
  | 'reply'
  | 'inbox'
  | 'read'
  | 'join'
  | 'leave'
  | 'channels'
  | 'create'
  | 'describe'
  | 'pin'
  | 'unpin'
  | 'invite'
  | 'kick'
  | 'dissolve'
  | 'purge'
  | 'peers'
  | 'status'
  | 'cleanup'
  | 'whoami';

/**
 * A hint: a verb to run, with named arguments in positional order, flags, and what it does
 * (`then`), or plain advice (`text`). Argument values are shown as data by each front end.
 */
export type Hint =
  | { verb: HintVerb; args?: [name: string, value: string][]; flags?: string[]; then?: string }
  | { text: string };

export class AttendError extends Error {
  override name = 'AttendError';
  readonly hint: Hint | undefined;
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    hint?: Hint | string,
  ) {
    super(message);
    this.hint = typeof hint === 'string' ? { text: hint } : hint;
  }
}

export const usageError = (msg: string, hint?: Hint | string) => new AttendError(msg, EXIT.usage, hint);
export const notFoundError = (msg: string, hint?: Hint | string) => new AttendError(msg, EXIT.notFound, hint);
export const busError = (msg: string, hint?: Hint | string) => new AttendError(msg, EXIT.bus, hint);
export const refusedError = (msg: string, hint?: Hint | string) => new AttendError(msg, EXIT.refused, hint);

/** A verb hint, shorter to write: `verbHint('join', [['channel', name]])`. */
export function verbHint(verb: HintVerb, args: [string, string][] = [], opts: { flags?: string[]; then?: string } = {}): Hint {
  return { verb, args, ...(opts.flags ? { flags: opts.flags } : {}), ...(opts.then ? { then: opts.then } : {}) };
}

/** The CLI wording of a verb (`channels create`), used by the CLI's hint renderer. */
const CLI_VERB: Record<HintVerb, string> = {
  send: 'send',
  reply: 'reply',
  inbox: 'inbox',
  read: 'inbox',
  join: 'join',
  leave: 'leave',
  channels: 'channels',
  create: 'channels create',
  describe: 'channels describe',
  pin: 'channels pin',
  unpin: 'channels unpin',
  invite: 'invite',
  kick: 'kick',
  dissolve: 'dissolve',
  purge: 'purge',
  peers: 'peers',
  status: 'status',
  cleanup: 'cleanup',
  whoami: 'whoami',
};

/** Quote an argument for a shell line only when it needs it. */
function shellWord(v: string): string {
  return /^[A-Za-z0-9_@%+=:,./#-]+$/.test(v) ? v : `"${v.replace(/(["\\$`])/g, '\\$1')}"`;
}

/** `attend join ops`, `attend dissolve ops --force`, plus what it does. */
export function hintForCli(h: Hint): string {
  if ('text' in h) return h.text;
  const words = ['attend', CLI_VERB[h.verb], ...(h.args ?? []).map(([, v]) => shellWord(v)), ...(h.flags ?? []).map((f) => `--${f}`)];
  return `${words.join(' ')}${h.then ? ` ${h.then}` : ''}`;
}
