// Whom a send may name (issue 21 item 1): the live roster here and on every machine the relay
// hears from, then every party the bus has known. The one address book of `--to`, MCP `to`
// and the chat's `@name`, looked up by tools/bus/presence/targets.ts lookupTarget, so a
// name resolves alike in every front end.

import type { VerbCtx } from './context.js';
import { type AddressBook, type Peer, knownParties, localHostName, peersEverywhere } from '../bus/presence/index.js';

/**
 * The address book as of now, over the live roster given (the context's own by default; the
 * chat passes its roster poller's read). The known tiers are read only when a target names
 * nobody live, each once per book (the second only when the first names nobody).
 */
export function addressBook(ctx: VerbCtx, live: Peer[] = ctx.live()): AddressBook {
  const root = ctx.root();
  const localHost = localHostName(root);
  const peers = peersEverywhere(root, live, ctx.now());
  const cache = new Map<'recorded' | 'all', Peer[]>();
  const tier = (t: 'recorded' | 'all') => () => {
    let v = cache.get(t);
    // The live are left out by the resolver (lookupTarget), so the recorded tier is the
    // cached array, indexed once per change of the names file.
    if (v === undefined) cache.set(t, (v = knownParties(root, new Set(), { owner: ownerOf(ctx), now: ctx.now(), localHost }, t)));
    return v;
  };
  return { peers, opts: { cwd: ctx.cwd, home: ctx.paths.home, localHost, known: [tier('recorded'), tier('all')] } };
}

/** The person who owns the bus: the Unix user this process runs as (never $USER), always addressable. */
function ownerOf(ctx: VerbCtx): { id: string; home: string } {
  return { id: ctx.identity().user, home: ctx.paths.home };
}
