// `policy` (issue 14 §2): the policy's settings — the mode, who posts to #open, the depth
// limit. Only the person who owns the bus changes them; grants are `allow` and `deny`
// (grants.ts). The file is read, changed and written under its lock (tools/bus/trust/policy.ts).

import { z } from 'zod';
import type { VerbCtx } from '../context.js';
import { parseInput } from '../input.js';
import { policyFile, updatePolicy } from '../../bus/trust/index.js';
import { printable } from '../../wire/names.js';
import type { Policy } from '../../wire/permit.js';

const given = (input: unknown) => printable(String(input), 20);

export const policyInput = z.strictObject({
  mode: z.enum(['family', 'groups'], { error: (iss) => `family or groups, not '${given(iss.input)}'` }).optional(),
  open: z.enum(['everyone', 'family', 'top', 'humans', 'granted'], { error: (iss) => `everyone, family, top, humans or granted, not '${given(iss.input)}'` }).optional(),
  // The bounds of the policy file's own schema (tools/bus/trust/policy.ts).
  maxDepth: z.number({ error: 'a whole number' }).int('a whole number').min(1, 'at least 1').max(64, 'at most 64').optional(),
  claims: z.enum(['warn', 'ask', 'deny'], { error: (iss) => `warn, ask or deny, not '${given(iss.input)}'` }).optional(),
});
type PolicyInput = z.input<typeof policyInput>;

interface PolicyResult {
  file: string;
  policy: Policy;
}

/** Change what the input names and keep the rest; with nothing named, the policy in force is written out as it is. */
export function runPolicy(ctx: VerbCtx, raw: PolicyInput): PolicyResult {
  const input = parseInput(policyInput, raw);
  const root = ctx.root();
  // updatePolicy refuses anyone but the person (exit 4) before it reads the file.
  const policy = updatePolicy(root, ctx.identity(), (p) => {
    if (input.mode !== undefined) p.mode = input.mode;
    if (input.open !== undefined) p.open = input.open;
    if (input.maxDepth !== undefined) p.maxDepth = input.maxDepth;
    if (input.claims !== undefined) p.claims = input.claims;
  });
  return { file: policyFile(root), policy };
}
