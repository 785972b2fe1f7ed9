// Lineage and cards as data (issue 14 §1, §7; issue 20 §6): `peers --tree`, `peers --cards`,
// `whoami --card` and `card verify`. Who started whom is recorded under `<bus>/lineage/`; a
// card is a node as an A2A AgentCard, signed by the node itself (tools/bus/trust/cards.ts).

import { z } from 'zod';
import type { VerbCtx } from '../context.js';
import { parseInput } from '../input.js';
import { type CardCheck, type CardJson, type TreeNode, cardFor, inClaudeSandbox, lineageForest, publishedCardFor, signedCardFor, verifyCard } from '../../bus/trust/index.js';
import { usageError } from '../../wire/errors.js';
import { runWhoami } from '../whoami.js';

const treeInput = z.strictObject({});
type TreeInput = z.input<typeof treeInput>;

interface TreeResult {
  /** The live nodes and their recorded ancestors, roots first. */
  tree: TreeNode[];
  /** The live nodes the tree was drawn for; an ancestor not among them is not live. */
  live: { id: string; name: string; kind: 'agent' | 'human' }[];
}

export function runTree(ctx: VerbCtx, input: TreeInput = {}): TreeResult {
  parseInput(treeInput, input);
  const live = ctx.live();
  return { tree: lineageForest(ctx.root(), live.map((p) => p.id)), live: live.map((p) => ({ id: p.id, name: p.name, kind: p.kind })) };
}

/** The card's `version` is the front end's build (it is the agent's version in A2A terms). */
const cardsInput = z.strictObject({ version: z.string().min(1) });
type CardsInput = z.input<typeof cardsInput>;

/**
 * The caller's own card, signed with its key. Inside Claude Code's sandbox the key directory is
 * out of reach (the signer signs messages only), so the card is printed unsigned, with a warning.
 */
async function ownCard(ctx: VerbCtx, node: Parameters<typeof cardFor>[1], version: string): Promise<CardJson> {
  if (inClaudeSandbox(ctx.env)) {
    ctx.warn("this card is unsigned: inside Claude Code's sandbox attend cannot read the key it is signed with (run attend whoami --card outside it)");
    return cardFor(ctx.root(), node, version);
  }
  return signedCardFor({ root: ctx.root(), keysDir: ctx.paths.keysDir, node, version, now: ctx.now() });
}

/** Every live node's card: the caller's signed now, the others' as they signed and published them. */
export async function runCards(ctx: VerbCtx, raw: CardsInput): Promise<CardJson[]> {
  const input = parseInput(cardsInput, raw);
  const me = ctx.identity().id;
  const out: CardJson[] = [];
  for (const p of ctx.live()) {
    const node = { id: p.id, kind: p.kind, name: p.name, origin: p.origin, claude: p.record !== undefined };
    out.push(p.id === me ? await ownCard(ctx, node, input.version) : await publishedCardFor(ctx.root(), node, input.version));
  }
  return out;
}

/** The caller's own card, signed. */
export async function runWhoamiCard(ctx: VerbCtx, raw: CardsInput): Promise<CardJson> {
  const input = parseInput(cardsInput, raw);
  const r = runWhoami(ctx);
  return ownCard(ctx, { id: r.id, kind: r.kind, name: r.displayName, origin: r.origin, claude: r.sessionId !== null }, input.version);
}

const verifyCardInput = z.strictObject({
  /** The card's text as read (a file or standard input). */
  text: z.string(),
  /** The node id the caller expects the card to be for. */
  id: z.string().min(1).optional(),
  /** A key id the caller pinned for the node earlier. */
  key: z.string().min(1).optional(),
});
type VerifyCardInput = z.input<typeof verifyCardInput>;

/**
 * `attend card verify`: check a card by what it carries alone (its key, its signatures), not
 * by this bus's key lists, so a peer on another machine can run it. Needs no bus.
 */
export async function runVerifyCard(_ctx: VerbCtx, raw: VerifyCardInput): Promise<CardCheck> {
  const input = parseInput(verifyCardInput, raw);
  let card: unknown;
  try {
    card = JSON.parse(input.text);
  } catch {
    throw usageError('not a card: the input is not JSON');
  }
  return verifyCard(card, { ...(input.id !== undefined ? { id: input.id } : {}), ...(input.key !== undefined ? { keyId: input.key } : {}) });
}
