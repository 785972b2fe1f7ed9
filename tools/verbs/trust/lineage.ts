// Lineage and cards as data (issue 14 §1, §7): `peers --tree`, `peers --cards` and
// `whoami --card`. Who started whom is recorded under `<bus>/lineage/`; a card is a node as
// an A2A AgentCard.

import type { AgentCard } from '@a2a-js/sdk';
import { z } from 'zod';
import type { VerbCtx } from '../context.js';
import { parseInput } from '../input.js';
import { type TreeNode, cardFor, lineageForest } from '../../bus/trust/index.js';
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

/** Every live node's card. */
export function runCards(ctx: VerbCtx, raw: CardsInput): AgentCard[] {
  const input = parseInput(cardsInput, raw);
  return ctx.live().map((p) => cardFor(ctx.root(), { id: p.id, kind: p.kind, name: p.name, origin: p.origin, claude: p.record !== undefined }, input.version));
}

/** The caller's own card. */
export function runWhoamiCard(ctx: VerbCtx, raw: CardsInput): AgentCard {
  const input = parseInput(cardsInput, raw);
  const r = runWhoami(ctx);
  return cardFor(ctx.root(), { id: r.id, kind: r.kind, name: r.displayName, origin: r.origin, claude: r.sessionId !== null }, input.version);
}
