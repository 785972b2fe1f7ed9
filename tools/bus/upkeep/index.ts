// Upkeep's public face (issue 19): cleanup, retention and purge. Only the verbs import it;
// no other concern of the bus does (an architecture test holds that).

export { applyCleanup, type CleanupItem, type CleanupPlan, planCleanup } from './cleanup.js';
export { purgeChannel, type PurgeResult } from './purge.js';
export { applyRetention, type KeptItem, parseDuration, planRetention, type RetentionItem, type Unshown } from './retention.js';
