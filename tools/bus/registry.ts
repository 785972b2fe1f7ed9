// The session registry (issue #3): ordinals and /clear tracking. A minimal stand-in with the
// agreed signature so delivery compiles; the channels work owns the real one.

export interface SessionObservation {
  pid: number;
  procStart: string;
  sessionId: string;
  origin: string;
}

export function observeSession(_root: string, _obs: SessionObservation): { ordinalIndex: number; previousSessionId?: string } {
  return { ordinalIndex: 0 };
}
