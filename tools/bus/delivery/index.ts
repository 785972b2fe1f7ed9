// Delivery's public face (issue 19): the consumption ledger every conduit shares (take,
// peek, move), whether a party was shown a message (retention's proof), the receive set, the
// owed backlog, the sensor claim, the /clear hand-over.
// Outside tools/bus/ this file is the only way into delivery.

export { handOver } from './handover.js';
export { conduitShown, LEDGER_GRACE_MS, listLedgerIds, moveLedger, noteShown, readLedger, type ShownBy, shownByOf } from './ledger.js';
export { type LedgerRead, ledgerDir, sessionLedgerDir } from './ledger-log.js';
export { type ShownQuery, type ShownVerdict, shownVerdict } from './shown.js';
export { giveBackAsync, peekPending, takePending, takePendingAsync } from './take.js';
export { type BackEntry } from './plan.js';
export { OWED_BACKLOG, writeOwed } from './owed.js';
export { resolveParents } from './parents.js';
export { receiveScopes } from './receive.js';
export { askForClaim, claimAsked, claimDelivererSlot, claimSensor, delivererLog, deliveryStatus, type DeliveryStatus, moveSensorClaim, openDelivererLog, readDeliverer, readSensor, releaseDelivererSlot, releaseSensor, withdrawClaimAsk } from './sensor-claim.js';
export { noteSurfaced, readSurfaced } from './surfaced.js';
