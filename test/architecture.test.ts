// The layering rules of style.md, made mechanical: dependencies point inwards, and heavy
// modules load only where they are needed, so `attend send` stays fast.
import { readFileSync, readdirSync, statSync } from 'node:fs';
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
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)) out.push((m[1] ?? m[2]) as string);
  return out;
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
    expect(target('tools/verbs/channels/moderation.ts', '../../bus/errors.js')).toBe('tools/bus');
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
