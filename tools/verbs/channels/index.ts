// The channel verbs, by concern.
export * from './common.js';
export * from './membership.js';
export * from './settings.js';
export * from './moderation.js';
