// `invite`: ask a live peer into a channel; it joins with `join` and then reads the backlog.

import { z } from 'zod';
import { runInvite } from '../verbs/channels/index.js';
import { channelArg, memberArg, namedParty } from './schemas.js';
import { defineTool } from './tool.js';

export const inviteTool = defineTool({
  name: 'invite',
  title: 'Invite to a channel',
  description:
    'Invite a live peer to a channel this session is a member of. The invitee gets a notice; when it joins, what was said there before is delivered to it.',
  // Each invite writes a new notice to the invitee.
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  input: z.strictObject({ who: memberArg, channel: channelArg }),
  output: z.object({ channel: z.string(), invitee: namedParty, notice: z.string().nullable().describe('the id of the notice written to the invitee') }),
  run: (ctx, args) => runInvite(ctx, { who: args.who, channel: args.channel }),
});
