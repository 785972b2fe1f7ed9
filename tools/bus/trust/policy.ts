// The policy file (issue 14 §2): `<root>/policy.json`, one readable file, validated with
// zod. No file means the default policy (tools/wire/permit.ts DEFAULT_POLICY): groups, as
// seed 000 D4 decides (issue 20). A file that does not parse is an error that
// names the file and the line, and nothing is delivered under it (fail closed).

import { join } from 'node:path';
import { type Grant, type Policy, DEFAULT_POLICY } from '../../wire/permit.js';
import { WIDE_CLASS } from '../../wire/envelope.js';
import { readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { AttendError, EXIT, refusedError, usageError } from '../../wire/errors.js';
import { withLock } from '../store/lock.js';

export function policyFile(root: string): string {
  return join(root, 'policy.json');
}

// The policy is checked by hand, not with zod: every fast path reads it (send, the claim
// check before each edit, search), and loading zod cost each of them ~45 ms of CPU once a
// policy file existed. An issue names the path of the value that is wrong, as zod's did, so
// the error can name its line.
interface Issue {
  path: (string | number)[];
  message: string;
}
type Checked = { success: true; data: Policy & { claims?: Policy['claims'] } } | { success: false; issue: Issue };

const POLICY_KEYS = ['version', 'mode', 'open', 'maxDepth', 'allow', 'deny', 'claims'] as const;
const MODES = ['family', 'groups'] as const;
const OPENS = ['everyone', 'family', 'top', 'humans', 'granted'] as const;
const CLAIMS = ['warn', 'ask', 'deny'] as const;
const CHANNEL_CLASS = /^[A-Za-z0-9_.-]+$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const unknownKeys = (o: Record<string, unknown>, known: readonly string[]) => Object.keys(o).filter((k) => !known.includes(k));
const keysIssue = (path: (string | number)[], keys: string[]): Issue => ({ path, message: `Unrecognized key${keys.length > 1 ? 's' : ''}: ${keys.map((k) => JSON.stringify(k)).join(', ')}` });

function checkPolicy(raw: unknown): Checked {
  const fail = (path: (string | number)[], message: string): Checked => ({ success: false, issue: { path, message } });
  if (!isObject(raw)) return fail([], `Invalid input: expected object, received ${kindOf(raw)}`);
  if (raw.version !== 1) return fail(['version'], 'Invalid input: expected 1');
  const oneOf = <T extends string>(key: string, allowed: readonly T[], dflt: T | undefined): T | undefined | Checked => {
    const v = raw[key];
    if (v === undefined) return dflt;
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
    return fail([key], `Invalid option: expected one of ${allowed.map((a) => JSON.stringify(a)).join('|')}`);
  };
  const mode = oneOf('mode', MODES, DEFAULT_POLICY.mode);
  if (typeof mode === 'object') return mode;
  const open = oneOf('open', OPENS, DEFAULT_POLICY.open);
  if (typeof open === 'object') return open;
  let maxDepth = 8;
  if (raw.maxDepth !== undefined) {
    const d = raw.maxDepth;
    if (typeof d !== 'number' || !Number.isInteger(d)) return fail(['maxDepth'], `Invalid input: expected int, received ${kindOf(d)}`);
    if (d < 1 || d > 64) return fail(['maxDepth'], `Too ${d < 1 ? 'small: expected number to be >=1' : 'big: expected number to be <=64'}`);
    maxDepth = d;
  }
  const grants = (key: 'allow' | 'deny'): Grant[] | Checked => {
    const v = raw[key];
    if (v === undefined) return [];
    if (!Array.isArray(v)) return fail([key], `Invalid input: expected array, received ${kindOf(v)}`);
    const out: Grant[] = [];
    for (let i = 0; i < v.length; i++) {
      const g: unknown = v[i];
      if (!isObject(g)) return fail([key, i], `Invalid input: expected object, received ${kindOf(g)}`);
      for (const f of ['from', 'to'] as const) {
        const id = g[f];
        if (typeof id !== 'string') return fail([key, i, f], `Invalid input: expected string, received ${kindOf(id)}`);
        if (!WIDE_CLASS.test(id)) return fail([key, i, f], 'an id in [A-Za-z0-9_@.,:/#*-]');
      }
      if (g.channel !== undefined && (typeof g.channel !== 'string' || !CHANNEL_CLASS.test(g.channel))) return fail([key, i, 'channel'], 'Invalid string: must match pattern /^[A-Za-z0-9_.-]+$/');
      const extra = unknownKeys(g, ['from', 'to', 'channel']);
      if (extra.length > 0) return { success: false, issue: keysIssue([key, i], extra) };
      out.push(g.channel !== undefined ? { from: g.from as string, to: g.to as string, channel: g.channel as string } : { from: g.from as string, to: g.to as string });
    }
    return out;
  };
  const allow = grants('allow');
  if (!Array.isArray(allow)) return allow;
  const deny = grants('deny');
  if (!Array.isArray(deny)) return deny;
  const claims = oneOf('claims', CLAIMS, undefined);
  if (typeof claims === 'object') return claims;
  const extra = unknownKeys(raw, POLICY_KEYS);
  if (extra.length > 0) return { success: false, issue: keysIssue([], extra) };
  return { success: true, data: { version: 1, mode: mode as Policy['mode'], open: open as Policy['open'], maxDepth, allow, deny, ...(claims !== undefined ? { claims: claims as NonNullable<Policy['claims']> } : {}) } };
}

type PolicyRead = { ok: true; policy: Policy; exists: boolean } | { ok: false; error: string };

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Where each JSON value starts, by path (`allow.3.from`), so a schema error can name its
 * line. A small scanner over text JSON.parse already accepted.
 */
function valueOffsets(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    ws();
    out.set(path, i);
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      while (text[i] !== '}') {
        ws();
        const k = str();
        ws();
        i++; // :
        value(path ? `${path}.${k}` : k);
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
    } else if (c === '[') {
      i++;
      ws();
      let n = 0;
      while (text[i] !== ']') {
        value(path ? `${path}.${n}` : String(n));
        n++;
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
    } else if (c === '"') str();
    else while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  value('');
  return out;
}

/**
 * Where JSON text first goes wrong, as an offset (node 20's JSON.parse names a position for
 * some errors and not others). A strict scanner: it only has to find the spot, not a value.
 */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const lit = (w: string) => {
    if (text.startsWith(w, i)) i += w.length;
    else fail();
  };
  const str = () => {
    if (text[i] !== '"') fail();
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const num = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail();
      }
    } else if (c === '"') str();
    else if (c === 't') lit('true');
    else if (c === 'f') lit('false');
    else if (c === 'n') lit('null');
    else num();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return -1;
  } catch (at) {
    return typeof at === 'number' ? at : 0;
  }
}

export function parsePolicy(text: string, file: string): PolicyRead {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0]!.replace(/, ".*$/, '').replace(/ in JSON at position \d+.*$/, '');
    return { ok: false, error: `${file}:${lineAt(text, Math.max(0, jsonErrorOffset(text)))}: not valid JSON (${msg})` };
  }
  const r = checkPolicy(raw);
  if (!r.success) {
    const issue = r.issue;
    const offsets = valueOffsets(text);
    let path = issue.path.map(String);
    // An unknown key has no value path of its own; point at the object that holds it.
    while (path.length > 0 && !offsets.has(path.join('.'))) path = path.slice(0, -1);
    const at = offsets.get(path.join('.')) ?? 0;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the file';
    return { ok: false, error: `${file}:${lineAt(text, at)}: ${where}: ${issue.message}` };
  }
  const p = r.data;
  return { ok: true, exists: true, policy: p };
}

export function readPolicy(root: string): PolicyRead {
  const file = policyFile(root);
  let text: string | null;
  try {
    text = readTextIfAny(file);
  } catch (err) {
    return { ok: false, error: `${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (text === null) return { ok: true, policy: DEFAULT_POLICY, exists: false };
  return parsePolicy(text, file);
}

/**
 * The policy's `claims` setting for the PreToolUse hook, read without zod (which costs the
 * hook's fast path ~40 ms, and the hook runs on every edit). A file that is not the policy
 * (no JSON, another version) gives the default: the schema check is every other reader's.
 */
export function readClaimsMode(root: string): 'warn' | 'ask' | 'deny' {
  try {
    const raw = JSON.parse(readTextIfAny(policyFile(root)) ?? '{}') as { version?: unknown; claims?: unknown };
    return raw.version === 1 && (raw.claims === 'ask' || raw.claims === 'deny') ? raw.claims : 'warn';
  } catch {
    return 'warn';
  }
}

/** The policy and whether a file holds it, or an AttendError (exit 3) naming the file and line: nothing moves under a broken policy. */
export function loadPolicy(root: string): { policy: Policy; exists: boolean } {
  const r = readPolicy(root);
  if (!r.ok) throw new AttendError(`the policy did not parse, so nothing is delivered: ${r.error}`, EXIT.bus, `fix or remove ${policyFile(root)}`);
  return r;
}

/** Grants one per line, so a person can read and diff the file. */
export function formatPolicy(p: Policy): string {
  const grants = (gs: Grant[]) => (gs.length === 0 ? '[]' : `[\n${gs.map((g) => `    ${JSON.stringify(g)}`).join(',\n')}\n  ]`);
  return `{\n  "version": 1,\n  "mode": ${JSON.stringify(p.mode)},\n  "open": ${JSON.stringify(p.open)},\n  "maxDepth": ${p.maxDepth},\n  "allow": ${grants(p.allow)},\n  "deny": ${grants(p.deny)}${p.claims !== undefined ? `,\n  "claims": ${JSON.stringify(p.claims)}` : ''}\n}\n`;
}

interface Changer {
  kind: 'agent' | 'human';
  id: string;
}

/** Only a human who owns the bus changes the policy; an agent cannot grant itself (spec §7). */
export function requireOwner(who: Changer): void {
  if (who.kind !== 'human') {
    throw refusedError(`only the human who owns the bus can change grants; ${who.id} is an agent`, 'ask the person at the terminal to run it');
  }
}

/** Read-modify-write under a lock. A broken file is refused, never overwritten. */
export function updatePolicy(root: string, who: Changer, fn: (p: Policy) => void): Policy {
  requireOwner(who);
  return withLock(`${policyFile(root)}.lock`, () => {
    const p = structuredClone(loadPolicy(root).policy);
    fn(p);
    const check = parsePolicy(formatPolicy(p), policyFile(root));
    if (!check.ok) throw usageError(check.error);
    writeFileAtomic(policyFile(root), formatPolicy(p));
    return p;
  });
}

const same = (a: Grant, b: Grant) => a.from === b.from && a.to === b.to && (a.channel ?? '') === (b.channel ?? '');

interface GrantChange {
  from: string;
  to: string;
  both?: boolean | undefined;
  channel?: string | undefined;
}

function pairs(c: GrantChange): Grant[] {
  const one = (from: string, to: string): Grant => (c.channel !== undefined ? { from, to, channel: c.channel } : { from, to });
  return c.both ? [one(c.from, c.to), one(c.to, c.from)] : [one(c.from, c.to)];
}

/** `attend allow`: add grants (and lift a matching deny). */
export function allow(root: string, who: Changer, c: GrantChange): Policy {
  return updatePolicy(root, who, (p) => {
    for (const g of pairs(c)) {
      p.deny = p.deny.filter((d) => !same(d, g));
      if (!p.allow.some((a) => same(a, g))) p.allow.push(g);
    }
  });
}

/** `attend deny`: remove matching grants and record a deny (which beats groups and family). */
export function deny(root: string, who: Changer, c: GrantChange): Policy {
  return updatePolicy(root, who, (p) => {
    for (const g of pairs(c)) {
      p.allow = p.allow.filter((a) => !same(a, g));
      if (!p.deny.some((d) => same(d, g))) p.deny.push(g);
    }
  });
}

/** A node named on the command line: a live peer's name, path or id, `#channel`, or an id as given. */
export function nodeArg(arg: string, resolveLive: (t: string) => string | null): string {
  const t = arg.trim();
  if (/^#[A-Za-z0-9_.-]+$/.test(t)) return t;
  const live = resolveLive(t);
  if (live !== null) return live;
  if (!WIDE_CLASS.test(t)) throw usageError(`'${t.slice(0, 40)}' is neither a live node nor a valid id`);
  return t;
}
