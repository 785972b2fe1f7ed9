// The trust verbs (issue 14, issue 19): keys, grants, the policy's settings, delegations,
// lineage and cards, for every front end. Each has a zod input schema and returns data.
export * from './keys.js';
export * from './grants.js';
export * from './policy.js';
export * from './delegate.js';
export * from './lineage.js';
