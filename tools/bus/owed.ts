// Messages owed to a session after an invite (issue #3). A minimal stand-in with the agreed
// signatures so delivery compiles; the channels work owns the real store.

export interface Owed {
  channel: string;
  ids: string[];
  olderCount: number;
}

export function readOwed(_root: string, _sid: string): Owed[] {
  return [];
}

export function clearOwed(_root: string, _sid: string, _channel: string): void {}
