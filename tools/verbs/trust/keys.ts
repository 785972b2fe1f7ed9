// `keys` and `keys rotate` (issue 14 §3): the caller's signing key and the key ids readers
// verify it by. The private key stays outside the bus root (docs/trust.md, "Keys").

import { z } from 'zod';
import type { VerbCtx } from '../context.js';
import { parseInput } from '../input.js';
import { type KeysReport, describeKeys, rotateKey } from '../../bus/trust/index.js';

const keysInput = z.strictObject({});
type KeysInput = z.input<typeof keysInput>;

/** The caller's current key (null before its first signed write) and every published id. Never creates a key. */
export function runKeys(ctx: VerbCtx, input: KeysInput = {}): KeysReport {
  parseInput(keysInput, input);
  return describeKeys({ keysDir: ctx.paths.keysDir, root: ctx.root(), node: ctx.identity().id });
}

const rotateKeyInput = z.strictObject({});
type RotateKeyInput = z.input<typeof rotateKeyInput>;

interface RotateKeyResult {
  node: string;
  /** The key it replaces, which stays published so old signatures still verify; null when there was none. */
  old: string | null;
  current: string;
  /** Where the new private key is (0600, outside the bus root). */
  privateKey: string;
}

export function runRotateKey(ctx: VerbCtx, input: RotateKeyInput = {}): RotateKeyResult {
  parseInput(rotateKeyInput, input);
  const r = rotateKey({ keysDir: ctx.paths.keysDir, root: ctx.root(), node: ctx.identity().id, now: ctx.now() });
  return { node: r.key.node, old: r.old, current: r.key.keyId, privateKey: r.key.path };
}
