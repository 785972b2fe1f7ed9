// CLI wiring for `attend search` (issue 23 §4): the verb is tools/verbs/search.ts, its printed
// form search-text.ts (shared with the fast path, fast-search.ts).

import { type Registrar, examples } from './registrar.js';

export const registerSearch: Registrar = (program, ctx, io) => {
  program
    .command('search')
    .description("full-text search over the messages you may see, best match first, with each hit's id and thread")
    .argument('<query...>', 'words that must all occur (case and accents do not matter)')
    .option('--from <party>', 'only messages from this party (name or id)')
    .option('--channel <name>', 'only this channel (or open for #open)')
    .option('--since <when>', 'only messages since a duration ago (30m, 2h, 7d) or a date')
    .option('--limit <n>', 'at most this many hits (1-100)', '20')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend search deploy failed', 'attend search migration --from alpha --since 2d', 'attend search --channel build flaky test --json | jq .hits[0].thread']))
    .action(async (words: string[], opts: { from?: string; channel?: string; since?: string; limit: string; json?: boolean }) => {
      (await import('./search-text.js')).printSearch(ctx, io, { words, ...opts });
    });
};
