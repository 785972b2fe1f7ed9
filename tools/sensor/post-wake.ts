// One deliverer wake (issue 21 §2): take what is pending from the ledger, plan the wake as the
// sensor does (tools/wire/wake.ts), and post it to the session's inbox socket as one post
// (tools/wire/inbox-post.ts). The ledger's lock is held from the plan to the confirm
// (takePendingAsync), across the post and the wait for its receipt; the wake is recorded in
// flight before the post (issue 21 §6). A message counts as delivered only when it was
// posted and no held/refused/dropped/expired receipt came within the wait; otherwise the
// wake is withdrawn and its messages stay unread for the Stop hook. The sockets
// are injected, so this is unit-tested over a temporary bus against a listener in the test.

import type { Identity } from '../identity/resolve.js';
import { noteShown, receiveScopes, resolveParents, takePendingAsync } from '../bus/delivery/index.js';
import type { Message } from '../bus/store/index.js';
import { DIGEST_THRESHOLD } from '../wire/party.js';
import { type InboxReceipt, inboxPost, inboxText } from '../wire/inbox-post.js';
import { itemIds, planStreamWake, streamItems } from '../wire/wake.js';
import type { ScanDeps, ScanResult } from './scan.js';

/** How long a post waits for a receipt before it counts as delivered (one is sent at once). */
const RECEIPT_WAIT_MS = 150;

interface PostDeps extends Omit<ScanDeps, 'write'> {
  /** Post one JSON line to the session's inbox socket; rejects when it cannot be reached. */
  post(line: string): Promise<void>;
  /** The deliverer's reply address (`uds:<path>`) and the receipts that come to it. */
  replyTo: string;
  receipt(msgId: string, ms: number): Promise<InboxReceipt | null>;
  newMsgId(): string;
  receiptWaitMs?: number;
  /**
   * The post is written, and `newest` is the newest message it shows: what the model's
   * SendMessage answer to it threads under. Told before the wait for a receipt, as the model
   * may answer within it.
   */
  posted?(newest: string): void;
}

export interface PostResult extends ScanResult {
  /** Why the post did not count: a receipt, or the socket could not be reached. */
  refused?: InboxReceipt | 'unreachable';
}

export async function postOnce(deps: PostDeps, who: Identity): Promise<PostResult> {
  const res: PostResult = { delivered: [], digest: false, later: false, closed: false, unsettled: false };
  await takePendingAsync(deps.root, who, { now: deps.now(), reporter: deps.reporter, warn: deps.warn }, (p) => {
    res.unsettled = p.unsettled === true;
    const known = p.fresh.length > DIGEST_THRESHOLD ? resolveParents(deps.root, receiveScopes(deps.root, who), p.fresh, deps.reporter) : undefined;
    const plan = planStreamWake({ fresh: p.fresh, hidden: p.hidden, invited: p.invited, taught: p.ledger.taught, me: who.id, ...(known ? { known } : {}), ...(p.again ? { again: p.again } : {}) });
    const names = deps.names(who.id);
    const items = streamItems(plan, names);
    // Notes alone (nothing shown, "N earlier messages not shown") wait for a message: a post
    // of its own would cost the model a turn (the sensor's rule, issue #11 §7).
    if (!items.some((i) => i.kind === 'message' || i.kind === 'digest')) return { consume: [], result: undefined };
    const consume = items.flatMap(itemIds);
    let newest: Message | undefined;
    for (const item of items) {
      if (item.kind === 'message') newest = item.message as Message;
      else if (item.kind === 'teach') p.ledger.taught = true;
    }
    if (newest) noteShown(p.ledger, newest);
    // The post is the deliverer's print: it goes out once takePendingAsync has recorded the
    // wake in flight, and a post the session did not take gives the whole wake back.
    const emit = async (): Promise<string[]> => {
      const msgId = deps.newMsgId();
      try {
        await deps.post(JSON.stringify(inboxPost(inboxText(items, names, deps.replyTo), deps.replyTo, msgId)));
      } catch (err) {
        deps.warn(`attend: cannot post to the session's inbox socket: ${(err as Error).message}`);
        res.refused = 'unreachable';
        return consume;
      }
      if (newest) deps.posted?.(newest.id);
      const receipt = await deps.receipt(msgId, deps.receiptWaitMs ?? RECEIPT_WAIT_MS);
      if (receipt !== null) {
        deps.warn(`attend: the session ${receipt} the post; its messages stay unread for the Stop hook`);
        res.refused = receipt;
        return consume;
      }
      for (const item of items) {
        if (item.kind !== 'digest') continue;
        res.digest = true;
        deps.trace?.(`attend: trace digest ids=${item.ids.join(',')}`);
      }
      res.delivered = consume;
      res.later = plan.later.length > 0;
      return [];
    };
    return { consume, result: undefined, emit };
  });
  return res;
}
