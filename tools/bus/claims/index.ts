// Claims' public face (issue 23 §2): advisory claims by a party on files, keyed by repository
// and path, holding while unexpired and while their holder is live. Outside tools/bus/ this
// file is the only way into claims.

export { covers, isGlob, overlaps } from './glob.js';
export { type FileKey, gitRootCommit, keyOf, type RootCommitReader } from './project.js';
export { type Claim, type ClaimHolder, claimsOn, holderAlive, liveClaims, readClaims, removeClaim, writeClaim } from './store.js';
