// Where things live under the bus root (docs/architecture.md, "The bus on disk").
//
//   <root>/signals/_broadcast/<id>.signal   #open
//   <root>/signals/@<name>/<id>.signal      a channel
//   <root>/signals/<attend-key>/<id>.signal a project tray
//   <root>/state/...                        ledgers, memberships, presence (attend's own)
//   <root>/cache/...                        derived data, rebuilt when missing (listings)

import { dirname, join } from 'node:path';
import type { Scope } from '../../wire/envelope.js';

export function signalsDir(root: string): string {
  return join(root, 'signals');
}

export function stateDir(root: string): string {
  return join(root, 'state');
}

/** Derived data (tools/bus/store/listing-cache.ts): safe to delete, never under signals/ (no watch wakes). */
export function cacheDir(root: string): string {
  return join(root, 'cache');
}

/**
 * The directories a command writes when it sends, reads or drains (messages, ledgers,
 * presence, caches, quarantined files): what Claude Code's sandbox must let a session write
 * (tools/cli/commands/install-sandbox.ts). The root itself, and the trust files beside these
 * (policy.json, lineage/, keys/, delegations/, relay/), are not among them.
 */
export function sandboxWritableDirs(root: string): string[] {
  return [signalsDir(root), stateDir(root), cacheDir(root), quarantineDir(root)];
}

/** Files under signals/ that no reader could parse (tools/bus/store/quarantine.ts). */
export function quarantineDir(root: string): string {
  return join(root, 'quarantine');
}

export function scopeDirName(scope: Scope): string {
  if (scope.kind === 'open') return '_broadcast';
  if (scope.kind === 'channel') return `@${scope.name}`;
  return scope.key;
}

export function scopeDir(root: string, scope: Scope): string {
  return join(signalsDir(root), scopeDirName(scope));
}

/** The bus root a scope directory (scopeDir) lies in. */
export function rootOfScopeDir(dir: string): string {
  return dirname(dirname(dir));
}

/** The scope a directory name under signals/ stands for, or null for one attend ignores. */
export function scopeOfDirName(name: string): Scope | null {
  if (name === '_broadcast') return { kind: 'open' };
  if (name.startsWith('@')) return name.length > 1 ? { kind: 'channel', name: name.slice(1) } : null;
  if (name.startsWith('_') || name.startsWith('.')) return null;
  return { kind: 'tray', key: name };
}
