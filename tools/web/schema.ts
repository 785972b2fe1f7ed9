// The one schema of `attend web` (issue 24 §2): every event the server pushes and every
// request body the page sends, validated on both sides with these same definitions. The
// server imports it from here; the page (web/) is bundled with it. Only zod: nothing here
// may pull the bus into the page.

import { z } from 'zod';

/** A message as the page shows it: header and body already rendered as data by the server. */
export const WebMessage = z.object({
  id: z.string(),
  /** The machine-readable header every conduit carries (tools/wire/render.ts messageHeader), sig= included. */
  header: z.string(),
  from: z.string(),
  fromName: z.string(),
  /** agent, human, or unknown (a file written without attend). */
  fromKind: z.string(),
  /** The addressee as the reader sees it: `#open`, `#ops`, `you`, a name. */
  toLabel: z.string(),
  /** Where it lives: `#open`, `#ops`, `direct`... (display.ts scopeName). */
  scope: z.string(),
  /** `open`, `channel` or `direct`: which view lists it. */
  kind: z.enum(['open', 'channel', 'direct']),
  channel: z.string().optional(),
  time: z.number(),
  /** Neutralised (control characters shown as pictures); the page renders it as text only. */
  body: z.string(),
  re: z.string().optional(),
  sig: z.enum(['ok', 'none', 'bad']).optional(),
  urgent: z.boolean().optional(),
});
export type WebMessage = z.infer<typeof WebMessage>;

export const WebPeer = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['agent', 'human']),
  /** The machine it lives on: this machine's host name for local parties. */
  host: z.string(),
  /** live, busy, idle, here, or gone. */
  status: z.string(),
  /** How a message reaches it: `shown by sensor`, `next turn`, `waiting`... */
  reach: z.string(),
  lastSeen: z.number(),
  gone: z.boolean(),
});
export type WebPeer = z.infer<typeof WebPeer>;

export const WebEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), me: z.string(), meName: z.string() }),
  z.object({ type: z.literal('history'), messages: z.array(WebMessage), hasOlder: z.boolean() }),
  z.object({ type: z.literal('arrived'), messages: z.array(WebMessage) }),
  z.object({ type: z.literal('roster'), peers: z.array(WebPeer), channels: z.array(z.string()) }),
  z.object({ type: z.literal('status'), text: z.string().nullable() }),
]);
export type WebEvent = z.infer<typeof WebEvent>;

/** POST /api/send: to #open (nothing else given), a channel, parties, or a reply to `re`. */
export const SendRequest = z
  .object({
    body: z.string().min(1).max(64 * 1024),
    channel: z.string().min(1).max(200).optional(),
    to: z.array(z.string().min(1).max(200)).max(50).optional(),
    re: z.string().min(1).max(200).optional(),
  })
  .strict();
export type SendRequest = z.infer<typeof SendRequest>;

export const SendResponse = z.object({ id: z.string(), to: z.string(), notes: z.array(z.string()) });
export type SendResponse = z.infer<typeof SendResponse>;

export const ErrorResponse = z.object({ error: z.string() });

export const SessionResponse = z.object({ me: z.string(), meName: z.string(), csrf: z.string() });
export type SessionResponse = z.infer<typeof SessionResponse>;

/**
 * What the page is served with (a JSON script element in GET /, BOOT_ELEMENT): its session
 * and the events a new stream begins with (hello, history, roster, status), so the first
 * paint waits for no second request; the stream sends them again when it opens.
 */
export const PageBoot = z.object({ session: SessionResponse, events: z.array(WebEvent) });
export type PageBoot = z.infer<typeof PageBoot>;
export const BOOT_ELEMENT = 'attend-boot';

/** A message the gate holds back, with why (the owner's `attend inbox --held`). */
export const HeldMessage = WebMessage.extend({ reason: z.string() });

/** One message the person sent, and who has been shown it (`attend inbox --sent`). */
export const SentRow = z.object({
  message: WebMessage,
  /** `by`: the conduit that showed it (sensor, deliverer, Stop hook, chat, web), as `attend ask --wait shown` names it, when known. */
  recipients: z.array(z.object({ id: z.string(), name: z.string(), shown: z.boolean(), by: z.string().optional() })),
});

/** The lineage (`attend peers --tree`): who started whom, named. */
export interface TreeNode {
  id: string;
  name: string;
  live: boolean;
  children: TreeNode[];
}
export const TreeNode: z.ZodType<TreeNode> = z.lazy(() => z.object({ id: z.string(), name: z.string(), live: z.boolean(), children: z.array(TreeNode) }));

const WebGrant = z.object({ from: z.string(), to: z.string(), channel: z.string().optional() });

/** The person's view (GET /api/owner): held messages, sent messages with who saw them, the policy, the lineage. */
export const OwnerView = z.object({
  held: z.array(HeldMessage),
  sent: z.array(SentRow),
  policy: z.object({ mode: z.string(), open: z.string(), maxDepth: z.number(), claims: z.string().optional(), allow: z.array(WebGrant), deny: z.array(WebGrant) }),
  policyError: z.string().optional(),
  tree: z.array(TreeNode),
});
export type OwnerView = z.infer<typeof OwnerView>;

/** POST /api/grant: `attend allow` / `attend deny` (the verb checks its own input again). */
export const GrantRequest = z
  .object({
    verb: z.enum(['allow', 'deny']),
    from: z.string().trim().min(1).max(200),
    to: z.string().trim().min(1).max(200),
    both: z.boolean().optional(),
    channel: z.string().min(1).max(200).optional(),
  })
  .strict();
export type GrantRequest = z.infer<typeof GrantRequest>;

/** POST /api/policy: `attend policy` (mode, who posts to #open, depth, claims). */
export const PolicyRequest = z
  .object({
    mode: z.enum(['family', 'groups']).optional(),
    open: z.enum(['everyone', 'family', 'top', 'humans', 'granted']).optional(),
    maxDepth: z.number().int().min(1).max(64).optional(),
    claims: z.enum(['warn', 'ask', 'deny']).optional(),
  })
  .strict();

/** GET /api/thread?id=: the thread a message is in (`attend inbox --thread`), oldest first. */
export const ThreadResponse = z.object({ messages: z.array(WebMessage) });
