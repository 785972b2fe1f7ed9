// Channels' public face (issue 19): the membership store and the notices (invite, kick,
// dissolve) written as messages. Outside tools/bus/ this file is the only way into channels.

export { type Channel, channelsFile, type ChannelStore, descriptionProblem, dissolvedChannel, type Invite, joinedChannels, MAX_DESCRIPTION, newChannel, pruneStore, readChannels, requireChannel, unknownChannel, updateChannels } from './membership.js';
export { type NoticeTarget, writeNotice } from './notices.js';
