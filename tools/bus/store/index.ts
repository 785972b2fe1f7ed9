// The message store's public face (issue 19): the bus root and its layout, atomic writes,
// locks, messages (read, write, list), the per-directory index, the listing cache and its
// follower. Outside tools/bus/ this file is the only way into the store.

export { type AtomicFile, fileStamp, readAll, writeAll, writeError, writeFileAtomic, writeFilesAtomic } from './atomic.js';
export { envelopeFrom } from './compose.js';
// The index's readers go through the follower: a second "index, else a full listing" is how copies began (issue 19).
export { appendIndexMany, dirStamp, INDEX_NAME, type IndexEnd, type IndexState, SETTLE_MS } from './dir-index.js';
export { type Followed, follow, followTail, newTailState, type TailState } from './follower.js';
export { sandboxWritableDirs, scopeDir, scopeDirName, scopeOfDirName, signalsDir, stateDir } from './layout.js';
export { emptyListing, mergeDescending, type Placed, type ScopeListing } from './listing.js';
export { ListingCorrupt } from './listing-base.js';
export { listingCacheDir, removeCache, withListings } from './listing-cache.js';
export { compareKeys, entryTime, type Key } from './listing-entry.js';
export { createReporter, findMessage, listIds, listScopes, MAX_BODY_BYTES, MAX_FILE_BYTES, type Message, readMessage, readScopes, type Reporter, SIGNAL_EXT, silentReporter, type Unreadable, unreadableDirs, writeSignals } from './messages.js';
export { countQuarantined } from './quarantine.js';
export { DirWatch } from './dir-watch.js';
export { type Wake, wakeOnChange } from './wake.js';
export { checkRoot, checkRootPath, DIR_MODE, ensureDir, ensureRoot, FILE_MODE } from './root.js';
