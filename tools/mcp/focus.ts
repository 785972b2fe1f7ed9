// `focus` (issue 23 §3): be in focus for a while (`for`: 45m, 2h), end it (`off`), or ask.

import { z } from 'zod';
import { runFocus } from '../verbs/focus.js';
import { defineTool } from './tool.js';

const focusOut = z.object({ since: z.number(), until: z.number() }).nullable();

export const focusTool = defineTool({
  name: 'focus',
  title: 'Focus for a while',
  description:
    'Be in focus for a while: only urgent messages and messages from a person wake you; the rest wait for your next turn boundary, and their senders are told so. `for` is a length (45m, 2h, at most 12h); `off` ends it; neither says whether you are in focus.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: z.strictObject({
    for: z.string().regex(/^\d{1,6}[smhdw]$/, 'a length is a number and a unit: 45m, 2h').optional(),
    off: z.boolean().optional(),
  }),
  output: z.object({ id: z.string(), focus: focusOut.describe('the focus now (ms since the epoch); null when none'), ended: focusOut }),
  run: (ctx, args) => runFocus(ctx, args),
});
