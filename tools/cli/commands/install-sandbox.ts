// The sandbox rules `attend install` merges into Claude Code's settings (issue 20 §7;
// docs/trust.md, "Inside Claude Code's sandbox"). They take effect when the user turns the
// sandbox on (`/sandbox`, or sandbox.enabled); install never turns it on or off.
//
//   env.ATTEND_SIGNER                       127.0.0.1:<port>, where `attend signer` listens
//   sandbox.network.allowedDomains          + 127.0.0.1:<port>: the one host address sandboxed
//                                           commands reach, through their session's proxy
//   sandbox.filesystem.denyRead             + the key directory (a tmpfs hides it)
//   sandbox.filesystem.allowWrite           + the bus directories a send writes (signals, state,
//                                           cache, quarantine); the root itself, policy.json,
//                                           lineage/, keys/, delegations/, relay/ stay read-only
//   permissions.deny                        + Read and Edit of the key directory, and Edit of the
//                                           trust directory beside it (the records readers verify
//                                           by): the Read and Edit tools run in the claude
//                                           process, outside the sandbox, and only a permission
//                                           rule stops them
//
// Every path named here exists before a sandboxed command runs (install makes them): for a
// path that does not exist, bwrap leaves an empty placeholder at that name on the host while
// the command runs (observed on 2.1.332), which attend outside would read as a broken file.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { relative, isAbsolute } from 'node:path';
import { AttendError, EXIT } from '../../wire/errors.js';
import { signerPort, trustDirOf } from '../../bus/trust/index.js';
import { ensureDir, ensureRoot, sandboxWritableDirs } from '../../bus/store/index.js';

type Json = Record<string, unknown>;

export interface SandboxRules {
  /** `127.0.0.1:<port>`: ATTEND_SIGNER and the allowed address. */
  signer: string;
  keysDir: string;
  writable: string[];
  /** The permission rules for the key directory, in Claude Code's path syntax. */
  deny: string[];
}

/** A path as a permission rule names it: `~/…` under the home directory, `//…` for any other absolute path. */
export function rulePath(path: string, home: string = homedir()): string {
  const rel = relative(home, path);
  if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) return `~/${rel}`;
  return `/${path}`;
}

/** Ports something on this machine already listens on or talks from (/proc/net/tcp and tcp6). */
function portsInUse(): Set<number> {
  const used = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const local = line.trim().split(/\s+/)[1];
      const hex = local?.slice(local.lastIndexOf(':') + 1);
      if (hex) used.add(parseInt(hex, 16));
    }
  }
  return used;
}

/**
 * A port for the signer: below Linux's ephemeral range (32768–60999), so an outgoing
 * connection never holds it, and free now.
 */
function choosePort(random: () => number): number {
  const used = portsInUse();
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(random() * 12_000);
    if (!used.has(port)) return port;
  }
  throw new AttendError('found no free port for attend signer between 20000 and 32000', EXIT.environment);
}

/** The rules for this user's key directory and bus; the port is the one settings already name, else a new one. */
export function sandboxRulesFor(opts: { settings: Json | null; keysDir: string; root: string; home: string; random?: () => number }): SandboxRules {
  const env = opts.settings?.env;
  const current = typeof env === 'object' && env !== null ? signerPort(env as Record<string, string>) : null;
  const port = current ?? choosePort(opts.random ?? Math.random);
  const keys = rulePath(opts.keysDir, opts.home);
  const trust = rulePath(trustDirOf(opts.keysDir), opts.home);
  return { signer: `127.0.0.1:${port}`, keysDir: opts.keysDir, writable: sandboxWritableDirs(opts.root), deny: [`Read(${keys}/**)`, `Edit(${keys}/**)`, `Edit(${trust}/**)`] };
}

export function foreign(path: string, what: string): AttendError {
  return new AttendError(`${path}: ${what}`, EXIT.refused, 'fix the file by hand, then re-run; nothing was written');
}

function addAll(list: string[], items: string[]): boolean {
  let changed = false;
  for (const item of items) {
    if (!list.includes(item)) {
      list.push(item);
      changed = true;
    }
  }
  return changed;
}

const isEmpty = (v: unknown) => (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && Object.keys(v).length === 0);

/**
 * The places the rules go, made where absent and checked for shape. `tidy` afterwards removes
 * what is empty now and was not there empty before: what the user had stays as it was (but
 * for an empty object of theirs that held only attend's entries since: nothing records it).
 */
function places(settings: Json, path: string) {
  const seen: { parent: Json; key: string; hadEmpty: boolean }[] = [];
  const at = <T>(parent: Json, key: string, name: string, list: boolean): T => {
    const v = parent[key];
    seen.push({ parent, key, hadEmpty: v !== undefined && isEmpty(v) });
    if (v === undefined) return (parent[key] = list ? [] : {}) as T;
    const ok = list ? Array.isArray(v) : typeof v === 'object' && v !== null && !Array.isArray(v);
    if (!ok) throw foreign(path, `"${name}" is not ${list ? 'an array' : 'an object'}`);
    return v as T;
  };
  const env = at<Json>(settings, 'env', 'env', false);
  const sandbox = at<Json>(settings, 'sandbox', 'sandbox', false);
  const network = at<Json>(sandbox, 'network', 'sandbox.network', false);
  const filesystem = at<Json>(sandbox, 'filesystem', 'sandbox.filesystem', false);
  const permissions = at<Json>(settings, 'permissions', 'permissions', false);
  return {
    env,
    domains: at<string[]>(network, 'allowedDomains', 'sandbox.network.allowedDomains', true),
    denyRead: at<string[]>(filesystem, 'denyRead', 'sandbox.filesystem.denyRead', true),
    allowWrite: at<string[]>(filesystem, 'allowWrite', 'sandbox.filesystem.allowWrite', true),
    deny: at<string[]>(permissions, 'deny', 'permissions.deny', true),
    tidy() {
      // Innermost first, so a parent emptied by its children's removal goes too.
      for (const { parent, key, hadEmpty } of [...seen].reverse()) if (!hadEmpty && isEmpty(parent[key])) delete parent[key];
    },
  };
}

/** Merge the rules into a settings object; returns whether anything changed. */
export function mergeSandboxRules(settings: Json, rules: SandboxRules, path: string): boolean {
  const p = places(settings, path);
  let changed = false;
  if (p.env.ATTEND_SIGNER !== rules.signer) {
    p.env.ATTEND_SIGNER = rules.signer;
    changed = true;
  }
  changed = addAll(p.domains, [rules.signer]) || changed;
  changed = addAll(p.denyRead, [rules.keysDir]) || changed;
  changed = addAll(p.allowWrite, rules.writable) || changed;
  changed = addAll(p.deny, rules.deny) || changed;
  p.tidy();
  return changed;
}

/** Take the rules out again, and nothing else; returns whether anything changed. */
export function removeSandboxRules(settings: Json, rules: SandboxRules, path: string): boolean {
  const before = JSON.stringify(settings);
  const p = places(settings, path);
  if (p.env.ATTEND_SIGNER === rules.signer) delete p.env.ATTEND_SIGNER;
  const drop = (list: string[], items: string[]) => {
    for (const item of items) {
      const i = list.indexOf(item);
      if (i >= 0) list.splice(i, 1);
    }
  };
  drop(p.domains, [rules.signer]);
  drop(p.denyRead, [rules.keysDir]);
  drop(p.allowWrite, rules.writable);
  drop(p.deny, rules.deny);
  p.tidy();
  return JSON.stringify(settings) !== before;
}

/** Make every directory the rules name, so none is a placeholder while a sandboxed command runs. */
export function makeSandboxDirs(rules: SandboxRules, root: string): void {
  ensureDir(rules.keysDir);
  ensureRoot(root);
  for (const dir of rules.writable) ensureDir(dir);
}

/** What install should say when the rules can be walked around in this settings file. */
export function sandboxWarnings(settings: Json): string[] {
  const sandbox = settings.sandbox as Json | undefined;
  if (sandbox?.enabled !== true || sandbox.allowUnsandboxedCommands === false) return [];
  return [
    'sandbox.allowUnsandboxedCommands is not false: a command the model asks to run outside the sandbox (dangerouslyDisableSandbox) can read the key directory once it is allowed; set it to false to keep the keys out of reach',
  ];
}
