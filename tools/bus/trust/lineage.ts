// Recorded lineage: `<root>/lineage/<node>` holds the node's parent id, written once, the
// first time attend sees the node (issue 14 §1). Readers look parents up by id.

import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { WIDE_CLASS } from '../../wire/envelope.js';
import type { Lineage } from '../../wire/permit.js';
import { fileStamp, readTextIfAny, writeFileAtomic } from '../store/atomic.js';

const NODE_FILE = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,127}$/;

function lineageDir(root: string): string {
  return join(root, 'lineage');
}

/** Changes when a parent is recorded (a new file in the lineage directory), for a reader that keeps what it decided. */
export function lineageStamp(root: string): string {
  return fileStamp(lineageDir(root));
}

/** Record a node's parent unless one is recorded already (a parent does not change). */
export function recordParent(root: string, node: string, parent: string): void {
  if (!NODE_FILE.test(node) || !WIDE_CLASS.test(parent) || node === parent) return;
  const file = join(lineageDir(root), node);
  if (existsSync(file)) return;
  writeFileAtomic(file, `${parent}\n`);
}

export function hasParentRecord(root: string, node: string): boolean {
  return NODE_FILE.test(node) && existsSync(join(lineageDir(root), node));
}

/** Parents by id, read on demand and kept for the life of the reader. */
export function readLineage(root: string): Lineage {
  const cache = new Map<string, string | undefined>();
  return {
    parentOf(id) {
      if (cache.has(id)) return cache.get(id);
      let p: string | undefined;
      if (NODE_FILE.test(id)) {
        try {
          const text = readTextIfAny(join(lineageDir(root), id))?.trim();
          if (text !== undefined && WIDE_CLASS.test(text)) p = text;
        } catch {
          p = undefined;
        }
      }
      cache.set(id, p);
      return p;
    },
  };
}

/** Every recorded node → parent. */
function allParents(root: string): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(lineageDir(root));
  } catch {
    return out;
  }
  const l = readLineage(root);
  for (const n of names) {
    const p = l.parentOf(n);
    if (p !== undefined) out.set(n, p);
  }
  return out;
}

export interface GroupView {
  parent: string | null;
  /** The group this node leads (itself and its direct children) and the one it belongs to. */
  children: string[];
  siblings: string[];
}

/** A node's place in the lineage: its parent, its children, its siblings (same parent). */
export function groupOf(root: string, id: string): GroupView {
  const all = allParents(root);
  const parent = all.get(id) ?? null;
  const children: string[] = [];
  const siblings: string[] = [];
  for (const [n, p] of all) {
    if (p === id) children.push(n);
    else if (parent !== null && p === parent && n !== id) siblings.push(n);
  }
  return { parent, children: children.sort(), siblings: siblings.sort() };
}

export interface TreeNode {
  id: string;
  children: TreeNode[];
}

/**
 * The lineage as a forest over `ids` (the live nodes) plus their recorded ancestors, roots
 * first. A cycle in hand-edited files is cut where it closes.
 */
export function lineageForest(root: string, ids: string[]): TreeNode[] {
  const all = allParents(root);
  const nodes = new Map<string, TreeNode>();
  const node = (id: string) => {
    let n = nodes.get(id);
    if (!n) {
      n = { id, children: [] };
      nodes.set(id, n);
    }
    return n;
  };
  const placed = new Set<string>();
  const roots: TreeNode[] = [];
  for (const start of ids) {
    let cur = start;
    const seen = new Set<string>();
    while (!placed.has(cur)) {
      placed.add(cur);
      seen.add(cur);
      const p = all.get(cur);
      if (p === undefined || seen.has(p)) {
        roots.push(node(cur));
        break;
      }
      node(p).children.push(node(cur));
      cur = p;
    }
  }
  const sort = (ns: TreeNode[]) => {
    ns.sort((a, b) => a.id.localeCompare(b.id));
    for (const n of ns) sort(n.children);
  };
  sort(roots);
  return roots;
}
