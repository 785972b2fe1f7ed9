// The channel ownership rule in words, for `--help` and /help: a module with no imports so
// the CLI can show it without loading the verbs (checkChannelRule in common.ts enforces it).

export const CHANNEL_RULE =
  'Who may: anyone creates and joins a channel; its members describe, pin, unpin, invite and kick (an agent never kicks a human); only its creator dissolves or purges it; a human may do all of these.';
