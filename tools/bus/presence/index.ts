// Presence's public face (issue 19): heartbeats, the ordinal registry, the live roster and
// its names, address resolution, the remote parties a relay reports. Outside tools/bus/ this
// file is the only way into presence.

export { type Delivery, deliveryOf, HEARTBEAT_FRESH_MS, isFresh, readPresence, removePresence, writePresence } from './heartbeats.js';
export { knownNamesSource, readKnownNames } from './names.js';
export { readRegistry, registeredAlive } from './registry.js';
export { importedLog, localHostName, peersEverywhere, readImported, readRemoteRoster, relayHealth, type RelayHealth, relayStateDir, remoteHostOf, type RemoteMember, remoteMembers, type RemoteRoster, writeRemoteRoster } from './remote.js';
export { createNameSource, isDeaf, listLive, type Peer } from './roster.js';
export { resolveTarget, resolveTargets } from './targets.js';
