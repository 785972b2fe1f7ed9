// The one error class. Every failure a user can cause or meet carries an exit code from
// the documented map (docs/reference.md, "Exit codes") and, where it helps, a hint.
// Callers branch on the code, never on the text.

export const EXIT = {
  ok: 0,
  /** Something named does not exist or nobody live is there: no recipient, unknown id. */
  notFound: 1,
  /** Usage: unknown flag, bad argument, invalid name or id, empty message. */
  usage: 2,
  /** The bus cannot be used: root owned by another user, unsafe permissions, IO failure. */
  bus: 3,
  /** Refused by a rule: a message over 64 KiB, not allowed for this identity, needs --force. */
  refused: 4,
  /** Something needed is missing from the environment (no TTY, no session). */
  environment: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class AttendError extends Error {
  override name = 'AttendError';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export const usageError = (msg: string, hint?: string) => new AttendError(msg, EXIT.usage, hint);
export const notFoundError = (msg: string, hint?: string) => new AttendError(msg, EXIT.notFound, hint);
export const busError = (msg: string, hint?: string) => new AttendError(msg, EXIT.bus, hint);
export const refusedError = (msg: string, hint?: string) => new AttendError(msg, EXIT.refused, hint);
