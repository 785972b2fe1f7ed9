// Search's public face (issue 23 §4): a full-text index per scope directory, caught up lazily
// from the directory indexes (catalog.ts), on disk in segments (segments.ts).

export { type CatchUp, catchUp, type Hit, queryTerms, searchDir, searchScopes } from './catalog.js';
export { SEGMENT_DOCS } from './segments.js';
