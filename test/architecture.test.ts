// The layering rules of style.md, made mechanical: dependencies point inwards, and heavy
// modules load only where they are needed, so `attend send` stays fast.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|tsx|cts)$/.test(name)) out.push(p);
  }
  return out;
}

/** Static imports only (`import ... from 'x'`, `import 'x'`); `await import()` is lazy and allowed. */
function staticImports(file: string): string[] {
  return importsOf(file, false);
}

/** Every import: static ones, and with `lazy` also `import('x')` (a lazy import is still a dependency). */
function importsOf(file: string, lazy: boolean): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)) out.push((m[1] ?? m[2]) as string);
  if (lazy) for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1] as string);
  return out;
}

/** A relative import from `file`, as a path from the repository root with its source extension. */
function resolveImport(file: string, spec: string): string | null {
  const base = join(file, '..', spec);
  for (const ext of ['.ts', '.tsx', '.cts']) {
    const p = base.replace(/\.c?js$/, ext);
    if (existsSync(p)) return p;
  }
  return null;
}

const all = sources('tools').map((f) => relative('.', f));

describe('layering (style.md)', () => {
  it('the import scanner sees static imports and ignores lazy ones', () => {
    expect(staticImports('tools/mcp/server.ts')).toContain('@modelcontextprotocol/sdk/server/index.js');
    expect(staticImports('tools/cli/commands/chat.ts')).not.toContain('../../chat/load.js');
  });

  it('tools/wire does no IO: no node:fs, no child processes, no process', () => {
    for (const f of all.filter((f) => f.startsWith('tools/wire/'))) {
      const text = readFileSync(f, 'utf8');
      expect(staticImports(f).filter((m) => m.startsWith('node:')), f).toEqual([]);
      expect(/\bprocess\./.test(text.replace(/\/\/.*$/gm, '')), `${f} touches process`).toBe(false);
    }
  });

  it('tools/wire imports nothing from the outer layers', () => {
    for (const f of all.filter((f) => f.startsWith('tools/wire/'))) {
      expect(staticImports(f).filter((m) => m.startsWith('../') && !m.startsWith('../wire/')), f).toEqual([]);
    }
  });

  const layer = (f: string) => f.split('/')[1] as string;
  /** Where a relative import from `file` lands: `tools/<layer>/...`. */
  const target = (file: string, spec: string) => join(file, '..', spec).split('/').slice(0, 2).join('/');

  it('front ends never import each other or the CLI: chat, mcp, sensor, drain import verbs and below', () => {
    for (const f of all.filter((f) => ['chat', 'mcp', 'sensor', 'drain', 'relay'].includes(layer(f)))) {
      const outward = staticImports(f)
        .filter((m) => m.startsWith('.'))
        .map((m) => target(f, m))
        .filter((t) => t !== `tools/${layer(f)}` && !['tools/verbs', 'tools/bus', 'tools/wire', 'tools/identity'].includes(t));
      expect(outward, f).toEqual([]);
    }
  });

  it('the verbs import only wire, bus, identity and other verbs', () => {
    const verbs = all.filter((f) => layer(f) === 'verbs');
    expect(verbs.length).toBeGreaterThan(5);
    for (const f of verbs) {
      const outward = staticImports(f)
        .filter((m) => m.startsWith('.'))
        .map((m) => target(f, m))
        .filter((t) => !['tools/verbs', 'tools/bus', 'tools/wire', 'tools/identity'].includes(t));
      expect(outward, f).toEqual([]);
      // Verbs never print or exit: the standard streams belong to the front ends.
      const text = readFileSync(f, 'utf8').replace(/\/\/.*$/gm, '');
      expect(/process\.(stdout|stderr|stdin|exit)\b/.test(text), `${f} touches the standard streams`).toBe(false);
    }
  });

  it('bus and identity never import the verbs or a front end', () => {
    for (const f of all.filter((f) => layer(f) === 'bus' || layer(f) === 'identity')) {
      const outward = staticImports(f)
        .filter((m) => m.startsWith('.'))
        .map((m) => target(f, m))
        .filter((t) => !['tools/bus', 'tools/wire', 'tools/identity'].includes(t));
      expect(outward, f).toEqual([]);
    }
  });

  it('the import scanner resolves relative imports to their layer (a positive control)', () => {
    expect(target('tools/mcp/send.ts', '../verbs/send.js')).toBe('tools/verbs');
    expect(target('tools/verbs/channels/moderation.ts', '../../bus/store/index.js')).toBe('tools/bus');
    expect(target('tools/verbs/channels/moderation.ts', './common.js')).toBe('tools/verbs');
  });

  it('ink and react are imported only inside tools/chat', () => {
    for (const f of all.filter((f) => !f.startsWith('tools/chat/'))) {
      expect(staticImports(f).filter((m) => m === 'ink' || m === 'react' || m.startsWith('react/') || m.startsWith('ink-')), f).toEqual([]);
    }
  });

  it('the MCP SDK is imported statically only in its own modules, never on the CLI start path', () => {
    const heavy = (m: string) => m.startsWith('@modelcontextprotocol/');
    for (const f of all) {
      const found = staticImports(f).filter(heavy);
      if (found.length === 0) continue;
      expect(f.startsWith('tools/mcp/') || f.startsWith('tools/sensor/'), `${f} imports ${found.join(', ')} statically`).toBe(true);
    }
    // And nothing the CLI loads at start imports those modules statically.
    for (const f of ['tools/cli/cli.ts', 'tools/cli/fast-send.ts', 'tools/cli/attend.cts', ...all.filter((f) => /^tools\/cli\/register-/.test(f))]) {
      // The chat's key table is the one exception: `attend chat --help` prints it, and it is
      // pure data that imports nothing (checked below).
      expect(staticImports(f).filter((m) => /\/(mcp|sensor|chat)\//.test(m) && m !== '../chat/keys.js'), f).toEqual([]);
    }
    expect(staticImports('tools/chat/keys.ts')).toEqual([]);
  });

  it('NATS is spoken only inside tools/relay, which the CLI loads lazily', () => {
    for (const f of all) {
      const found = staticImports(f).filter((m) => m.startsWith('@nats-io/'));
      if (found.length > 0) expect(f.startsWith('tools/relay/'), `${f} imports ${found.join(', ')}`).toBe(true);
    }
    for (const f of all.filter((f) => !f.startsWith('tools/relay/'))) {
      expect(staticImports(f).filter((m) => /(^|\/)relay\//.test(m)), `${f} imports tools/relay statically`).toEqual([]);
    }
    // And the relay reaches the bus through tools/bus, never another front end.
    for (const f of all.filter((f) => f.startsWith('tools/relay/'))) {
      expect(staticImports(f).filter((m) => /\/(cli|chat|mcp|sensor|drain)\//.test(m)), f).toEqual([]);
    }
  });
});

// The bus in rooms (issue 19): one folder per concern, each with one index.ts as its face.
const CONCERNS = ['store', 'delivery', 'trust', 'presence', 'channels', 'upkeep', 'claims', 'search'];
const concernOf = (f: string): string | null => {
  const m = /^tools\/bus\/([^/]+)\/[^/]+$/.exec(f);
  return m ? (m[1] as string) : null;
};

describe('the bus in rooms (issue 19)', () => {
  it('tools/bus holds only the concern folders, each with an index.ts', () => {
    expect(readdirSync('tools/bus').sort()).toEqual([...CONCERNS].sort());
    for (const c of CONCERNS) expect(existsSync(`tools/bus/${c}/index.ts`), c).toBe(true);
    for (const f of all.filter((f) => f.startsWith('tools/bus/'))) expect(concernOf(f), f).not.toBeNull();
  });

  it('outside tools/bus/ a concern is imported only through its index.ts, lazily or not', () => {
    let seen = 0;
    for (const f of all.filter((f) => !f.startsWith('tools/bus/'))) {
      for (const spec of importsOf(f, true).filter((m) => m.startsWith('.'))) {
        const t = resolveImport(f, spec);
        if (t === null || !t.startsWith('tools/bus/')) continue;
        seen += 1;
        expect(/^tools\/bus\/[^/]+\/index\.ts$/.test(t), `${f} imports ${spec}`).toBe(true);
      }
    }
    expect(seen).toBeGreaterThan(50);
  });

  it('no concern imports upkeep, and the store imports no other concern but the signature check a read needs', () => {
    const readCheck = new Set(['tools/bus/trust/signing.ts', 'tools/bus/trust/origin.ts', 'tools/bus/trust/delegation.ts']);
    for (const f of all.filter((f) => f.startsWith('tools/bus/'))) {
      const from = concernOf(f);
      for (const spec of importsOf(f, true).filter((m) => m.startsWith('.'))) {
        const t = resolveImport(f, spec);
        if (t === null) continue;
        const to = concernOf(t);
        if (to === 'upkeep') expect(from, `${f} imports ${spec}`).toBe('upkeep');
        if (from === 'store' && to !== null && to !== 'store') expect(readCheck.has(t), `${f} imports ${spec}`).toBe(true);
      }
    }
    // Only the verbs reach upkeep from outside the bus.
    for (const f of all.filter((f) => !f.startsWith('tools/bus/') && !f.startsWith('tools/verbs/'))) {
      expect(importsOf(f, true).filter((m) => m.startsWith('.') && resolveImport(f, m)?.startsWith('tools/bus/upkeep/')), f).toEqual([]);
    }
  });

  it('no import cycle anywhere in tools/, type-only imports included', () => {
    const graph = new Map<string, string[]>();
    for (const f of all) {
      const deps = importsOf(f, false)
        .filter((m) => m.startsWith('.'))
        .map((m) => resolveImport(f, m))
        .filter((t): t is string => t !== null);
      graph.set(f, deps);
    }
    const cycles = findCycles(graph);
    expect(cycles).toEqual([]);
  });

  it('the cycle finder finds a cycle (a positive control)', () => {
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    expect(findCycles(g)).toEqual(['a -> b -> c -> a']);
    expect(findCycles(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
  });

  // "Is this for me" and "may this reader see it" are decided in one place (issue 19, "each
  // rule once"): nothing outside tools/wire/visibility.ts looks for a reader among a
  // message's addressees, or takes a `to` apart by hand.
  it('only tools/wire/visibility.ts compares addressees with a reader', () => {
    const found = all.filter((f) => f !== VISIBILITY).flatMap((f) => addresseeComparisons(readFileSync(f, 'utf8')).map((c) => `${f}: ${c}`));
    expect(found).toEqual([]);
    // The module itself is what the rule is about: the scanner sees its comparisons.
    expect(addresseeComparisons(readFileSync(VISIBILITY, 'utf8')).length).toBeGreaterThan(0);
  });

  it('the addressee scanner finds each way of asking by hand, and passes the ways that do not ask (a positive control)', () => {
    const asks = [
      'if (addressees(m.to).includes(me)) return true;',
      'return addressees(e.to ?? "tray").indexOf(who) >= 0;',
      'const ids = addressees(msg.to);\nreturn ids.length === 0 || ids.includes(who.id);',
      'let set = new Set(addressees(m.to));\nif (set.has(reader.id)) x();',
      'const ok = new Set(addressees(m.to)).has(me);',
      'const first = m.to.split(",")[0];',
      'if (msg.to.includes(me)) return;',
      'return m.to === who.id;',
      'if (e.to !== me) continue;',
      'const mine = (m) => m.to\n  .split(",")\n  .some((x) => x === me);',
    ];
    for (const text of asks) expect(addresseeComparisons(text), text).not.toEqual([]);
    const fine = [
      "if (m.to === '*') return '#open';",
      "if (m.to.startsWith('#')) return m.to;",
      'return addressees(m.to).map((id) => (id === names.me ? "you" : names.name(id))).join(", ");',
      'const ids = addressees(to);\nif (ids.length === 0) return null;\nfor (const id of ids) hosts.add(hostOf(id));',
      'const same = (a, b) => a.from === b.from && a.to === b.to;',
      'if (maySee(l.scope, e, who.id)) n++;',
      '// addressees(m.to).includes(me) in a comment is not code',
    ];
    for (const text of fine) expect(addresseeComparisons(text), text).toEqual([]);
  });
});

const VISIBILITY = 'tools/wire/visibility.ts';

/**
 * Where a source text compares a message's addressees with a reader by hand: a membership
 * test on what `addressees()` returns (directly, or through a name bound to it), a `to` taken
 * apart or searched as a string, or a whole `to` compared with an id.
 */
function addresseeComparisons(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const out: string[] = [];
  const member = String.raw`\s*\.\s*(?:includes|indexOf|lastIndexOf|has|some|every|find|findIndex)\s*\(`;
  // addressees(...) or new Set(addressees(...)), with one level of nested parentheses inside.
  const call = String.raw`addressees\((?:[^()]|\([^()]*\))*\)`;
  for (const m of text.matchAll(new RegExp(String.raw`\b(?:new\s+Set\(\s*)?${call}\s*\)?${member}`, 'g'))) out.push(m[0]);
  for (const b of text.matchAll(new RegExp(String.raw`\b([A-Za-z_$][\w$]*)\s*=\s*(?:new\s+Set\(\s*)?${call}`, 'g'))) {
    for (const m of text.matchAll(new RegExp(String.raw`\b${b[1]}${member}`, 'g'))) out.push(`${b[0]} … ${m[0]}`);
  }
  for (const m of text.matchAll(/\.to\s*\.\s*(?:split|includes|indexOf|match|search)\s*\(/g)) out.push(m[0]);
  for (const m of text.matchAll(/\.to\s*[!=]==?\s*(?:me|who|reader|self)\b|\.to\s*[!=]==?\s*[\w$.]+\.id\b/g)) out.push(m[0]);
  return out;
}

function findCycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (n: string): void => {
    state.set(n, 1);
    stack.push(n);
    for (const d of graph.get(n) ?? []) {
      if (state.get(d) === 1) cycles.push([...stack.slice(stack.indexOf(d)), d].join(' -> '));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return cycles;
}

/** The chain of test modules from `file` to one that imports node:child_process, if any (lazy imports too). */
function spawningChain(file: string): string[] | null {
  const seen = new Set<string>([file]);
  const queue: string[][] = [[file]];
  while (queue.length > 0) {
    const chain = queue.shift() as string[];
    const at = chain[chain.length - 1] as string;
    const specs = importsOf(at, true);
    if (specs.some((m) => m === 'node:child_process' || m === 'child_process')) return chain;
    for (const spec of specs.filter((m) => m.startsWith('.'))) {
      const next = resolveImport(at, spec);
      if (next && next.startsWith('test/') && !seen.has(next)) {
        seen.add(next);
        queue.push([...chain, next]);
      }
    }
  }
  return null;
}

describe('test tiers (style.md, "Tests, in tiers")', () => {
  const tests = sources('test').map((f) => relative('.', f)).filter((f) => /\.test\.tsx?$/.test(f));
  const inProcess = tests.filter((f) => !f.startsWith('test/e2e/'));

  it('the scanner follows imports to the helpers that spawn (a positive control)', () => {
    expect(spawningChain('test/helpers/bus.ts')).toEqual(['test/helpers/bus.ts']);
    expect(spawningChain('test/e2e/cli.test.ts')).not.toBeNull();
    expect(spawningChain('test/helpers/temp-bus.ts')).toBeNull();
    expect(inProcess.length).toBeGreaterThan(30);
  });

  it('no unit or slow test reaches node:child_process: what spawns is in test/e2e/', () => {
    // test/helpers/bus.ts, delivery.ts, claude-code.ts, nats.ts, hub.ts and relay.ts start
    // processes; in-process tests use temp-bus.ts and fixtures.ts. test/setup/in-process.ts
    // fails a test that starts a child process through the code under test.
    const offenders = inProcess.map((f) => spawningChain(f)).filter((c) => c !== null).map((c) => c.join(' -> '));
    expect(offenders).toEqual([]);
  });
});

describe('exports (issue 19)', () => {
  /** Every identifier in tools/, test/ and scripts/ (comments dropped), counted per file. */
  function wordCounts(): Map<string, Map<string, number>> {
    const files = [...sources('tools'), ...sources('test'), ...sourcesMjs('scripts')].map((f) => relative('.', f));
    const words = new Map<string, Map<string, number>>();
    for (const f of files) {
      const text = readFileSync(f, 'utf8').replace(/\/\/.*$/gm, '');
      for (const m of text.matchAll(/[A-Za-z_$][\w$]*/g)) {
        let per = words.get(m[0]);
        if (!per) words.set(m[0], (per = new Map()));
        per.set(f, (per.get(f) ?? 0) + 1);
      }
    }
    return words;
  }
  function sourcesMjs(dir: string): string[] {
    const out: string[] = [];
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) out.push(...sourcesMjs(p));
      else if (name.endsWith('.mjs')) out.push(p);
    }
    return out;
  }
  const declared = /^export\s+(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;

  it('no export is dead: each is used somewhere besides its own declaration (an index re-export alone is no use)', () => {
    const words = wordCounts();
    const dead: string[] = [];
    for (const f of all.filter((f) => !f.endsWith('/index.ts'))) {
      for (const m of readFileSync(f, 'utf8').replace(/\/\/.*$/gm, '').matchAll(declared)) {
        const name = m[1] as string;
        const per = words.get(name) ?? new Map<string, number>();
        const elsewhere = [...per.keys()].some((g) => g !== f && !g.endsWith('/index.ts'));
        if (!elsewhere && (per.get(f) ?? 0) <= 1) dead.push(`${f} ${name}`);
      }
    }
    expect(dead).toEqual([]);
  });

  it('the dead-export scanner sees a declaration (a positive control)', () => {
    const text = 'export function lonely(): void {}\nexport const used = 1;\n';
    expect([...text.matchAll(declared)].map((m) => m[1])).toEqual(['lonely', 'used']);
  });
});
