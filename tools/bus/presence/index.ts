// Presence's public face (issue 19): heartbeats, the ordinal registry, the live roster and
// its names, address resolution, the remote parties a relay reports. Outside tools/bus/ this
// file is the only way into presence.

export { type Delivery, deliveryOf, HEARTBEAT_FRESH_MS, isFresh, presenceDir, type PresenceRecord, readPresence, readPresenceOf, removePresence, writePresence } from './heartbeats.js';
export { conduitOf } from './conduit.js';
export { knownNamesSource, nameParties, readKnownNames, rememberParties } from './names.js';
export { knownParties, remoteHostOf } from './known.js';
export { readRegistry, registeredAlive } from './registry.js';
export { importedLog, localHostName, peersEverywhere, readImported, readRemoteRoster, relayHealth, type RelayHealth, relayStateDir, relayWaiting, type RelayWaiting, waitingText, type RemoteMember, remoteMembers, type RemoteRoster, writeRemoteRoster } from './remote.js';
export { createNameSource, listLive, type Peer } from './roster.js';
export { reachOf } from './reach.js';
export { readFocus, readFocusAll, writeFocus } from './focus.js';
export { type AddressBook, lookupTarget, resolveTarget, resolveTargets, type TargetLookup } from './targets.js';
