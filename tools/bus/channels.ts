// Channel membership. The foundation reads it; the channels issue (#3) owns writing it.

/** Channels `id` has joined (bare names, no `#`). */
export function joinedChannels(_root: string, _id: string): string[] {
  return [];
}
