// Trust's public face (issue 19): keys and signing, the read gate and the send check, the
// policy file, lineage, delegations, A2A cards. Outside tools/bus/ this file is the only way
// into trust.

export { type CardCheck, type CardJson, cardFor, publishedCardFor, signedCardFor, verifyCard } from './cards.js';
export { delegate, delegationsStamp, parseScope, parseTtl, requirePrincipal, type SignedDelegation } from './delegation.js';
export { checkJoin, checkReach, checkSend, createGate, type Gate, type Reader } from './gate.js';
export { createHeldCheck, type HeldCheck, type HeldRun, UNCHECKED } from './held.js';
export { markTrustChanged, trustStamp } from './stamp.js';
export { anchorOf, chainPath, keysHealth, trustDirOf, useKeyDirectory } from './anchors.js';
export { verifyBytes } from './ed25519.js';
export { describeKeys, type KeysReport, publishedKeysDir, rotateKey } from './keys.js';
export { groupOf, type GroupView, hasParentRecord, lineageForest, lineageStamp, recordParent, type TreeNode } from './lineage.js';
export { allow, deny, nodeArg, policyFile, readClaimsMode, readPolicy, requireOwner, updatePolicy } from './policy.js';
export { claimProblem, isLocalNode, readRemoteKeys, recordRemoteKeys } from './remote-keys.js';
export { createDetachedSigner, createSigner, type DetachedSign, SIG_EXT, type Signer } from './signing.js';
export { askSigner, createRemoteSigner, createSignerService, inClaudeSandbox, sandboxSigner, type SignerAddress, signerPort, signerSession } from './signer.js';
export { privateDirName, openPrivateDir, privateDirOf, privatePath } from './private.js';
