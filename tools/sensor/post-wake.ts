// One deliverer wake (issue 21 §2): take what is pending from the ledger, plan the wake as the
// sensor does (tools/wire/wake.ts), and post it to the session's inbox socket as one post
// (tools/wire/inbox-post.ts). The wake is recorded in flight before the post and confirmed
// after it (takePendingAsync, issue 21 §6); a post that cannot be written withdraws it. Claude
// Code says nothing for a post it delivers and sends a receipt for one it holds, refuses or
// drops on its own time (9 to 321 ms after the post on 2.1.332 on a loaded machine; minutes
// for a held post that expires), so the wake is confirmed once the post is written and
// returns what it posted: on a receipt the deliverer gives those messages back
// (giveBackAsync), unread again for the Stop hook. Waiting here for a receipt that may never
// come would hold the ledger's lock and every later message. The socket is injected, so this
// is unit-tested over a temporary bus against a listener in the test.

import type { Identity } from '../identity/resolve.js';
import { type BackEntry, noteShown, receiveScopes, resolveParents, takePendingAsync } from '../bus/delivery/index.js';
import { type Message, scopeDirName } from '../bus/store/index.js';
import { readFocus } from '../bus/presence/index.js';
import { DIGEST_THRESHOLD } from '../wire/party.js';
import { inboxPost, inboxText } from '../wire/inbox-post.js';
import { itemIds, planStreamWake, streamItems } from '../wire/wake.js';
import type { ScanDeps, ScanResult } from './scan.js';

interface PostDeps extends Omit<ScanDeps, 'write'> {
  /** Post one JSON line to the session's inbox socket; rejects when it cannot be reached. */
  post(line: string): Promise<void>;
  /** The deliverer's reply address (`uds:<path>`), where receipts and answers come. */
  replyTo: string;
  newMsgId(): string;
  /**
   * The post is written: told at once, before the wake is confirmed, since its receipt (or
   * the model's SendMessage answer) may come back within milliseconds.
   */
  posted?(post: Posted): void;
}

/** What a post carried: its msg_id (a receipt names it), its messages, and the newest of them. */
interface Posted {
  msgId: string;
  back: BackEntry[];
  newest?: string;
}

export interface PostResult extends ScanResult {
  /** The socket could not be reached: the wake was withdrawn. */
  unreachable?: boolean;
  /** What was posted. */
  posted?: Posted;
}

export async function postOnce(deps: PostDeps, who: Identity): Promise<PostResult> {
  const res: PostResult = { delivered: [], digest: false, later: false, closed: false, unsettled: false };
  await takePendingAsync(deps.root, who, { now: deps.now(), reporter: deps.reporter, warn: deps.warn, conduit: 'deliverer' }, (p) => {
    res.unsettled = p.unsettled === true;
    // Left unverified past the pass's cap: look again, whatever this wake shows.
    const more = (p.unchecked ?? 0) > 0;
    res.later = more;
    const known = p.fresh.length > DIGEST_THRESHOLD ? resolveParents(deps.root, receiveScopes(deps.root, who), p.fresh, deps.reporter) : undefined;
    const plan = planStreamWake({ fresh: p.fresh, hidden: p.hidden, invited: p.invited, taught: p.ledger.taught, me: who.id, attention: { focus: readFocus(deps.root, who.id, deps.now()), now: deps.now() }, ...(known ? { known } : {}), ...(p.again ? { again: p.again } : {}) });
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
    const dirOf = new Map(p.fresh.map((m) => [m.id, scopeDirName(m.scope)]));
    // The post is the deliverer's print: it goes out once takePendingAsync has recorded the
    // wake in flight; a post that cannot be written gives the whole wake back.
    const emit = async (): Promise<string[]> => {
      const msgId = deps.newMsgId();
      try {
        await deps.post(JSON.stringify(inboxPost(inboxText(items, names, deps.replyTo), deps.replyTo, msgId)));
      } catch (err) {
        deps.warn(`attend: cannot post to the session's inbox socket: ${(err as Error).message}`);
        res.unreachable = true;
        return consume;
      }
      for (const item of items) {
        if (item.kind !== 'digest') continue;
        res.digest = true;
        deps.trace?.(`attend: trace digest ids=${item.ids.join(',')}`);
      }
      const back = consume.flatMap((id) => {
        const dir = dirOf.get(id);
        return dir !== undefined ? [{ id, dir }] : [];
      });
      res.posted = { msgId, back, ...(newest ? { newest: newest.id } : {}) };
      deps.posted?.(res.posted);
      res.delivered = consume;
      res.later = plan.later.length > 0 || more;
      return [];
    };
    return { consume, result: undefined, emit };
  });
  return res;
}
