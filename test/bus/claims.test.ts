// File claims' parts (issue 23 §2), in-process over a temporary bus: which project a file
// belongs to (two worktrees and two clones of one repository are one project, by the root
// commit), the glob rules, and when a claim holds (its TTL, its holder's process).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Claim, claimsOn, covers, keyOf, liveClaims, overlaps, readClaims, removeClaim, writeClaim } from '../../tools/bus/claims/index.js';
import { procStart, type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => {
  bus = b;
});

/** A repository laid out as git lays it out: a main work tree, a linked worktree, and a clone. */
function repos(): { main: string; linked: string; clone: string; plain: string } {
  const main = join(bus.dir, 'main');
  const linked = join(bus.dir, 'linked');
  const clone = join(bus.dir, 'clone');
  const plain = join(bus.dir, 'plain');
  mkdirSync(join(main, '.git', 'worktrees', 'linked'), { recursive: true });
  writeFileSync(join(main, '.git', 'worktrees', 'linked', 'commondir'), '../..\n');
  mkdirSync(join(linked, 'src'), { recursive: true });
  writeFileSync(join(linked, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'linked')}\n`);
  mkdirSync(join(clone, '.git'), { recursive: true });
  mkdirSync(plain, { recursive: true });
  return { main, linked, clone, plain };
}

describe('keying: repository identity and the path from the work tree root', () => {
  it('a linked worktree and a clone of one repository are one project; the path is relative to each work tree', () => {
    const r = repos();
    const asked: string[] = [];
    const root = (gitDir: string) => {
      asked.push(gitDir);
      return 'a'.repeat(40);
    };
    const inMain = keyOf(bus.root, 'src/a.ts', r.main, root);
    const inLinked = keyOf(bus.root, join(r.linked, 'src', 'a.ts'), '/', root);
    const inClone = keyOf(bus.root, join(r.clone, 'src', 'a.ts'), '/', root);
    expect(inMain).toEqual({ project: `git:${'a'.repeat(40)}`, worktree: r.main, rel: 'src/a.ts' });
    expect(inLinked).toEqual({ project: inMain.project, worktree: r.linked, rel: 'src/a.ts' });
    expect(inClone.project).toBe(inMain.project);
    // The linked worktree's common git directory is the main one: asked once, then cached.
    expect(asked).toEqual([join(r.main, '.git'), join(r.clone, '.git')]);
    keyOf(bus.root, join(r.linked, 'b.ts'), '/', root);
    expect(asked).toHaveLength(2);
  });

  it('another repository is another project; a repository with no commit is known by its git directory; outside any, the absolute path', () => {
    const r = repos();
    const other = keyOf(bus.root, join(r.clone, 'x'), '/', () => 'b'.repeat(40));
    const mine = keyOf(bus.root, join(r.main, 'x'), '/', () => 'a'.repeat(40));
    expect(other.project).not.toBe(mine.project);
    expect(keyOf(bus.root, join(r.clone, 'y'), '/', () => null).project).toBe(`git:${'b'.repeat(40)}`); // cached from before
    mkdirSync(join(bus.dir, 'fresh', '.git'), { recursive: true });
    expect(keyOf(bus.root, join(bus.dir, 'fresh', 'z'), '/', () => null).project).toBe(`gitdir:${join(bus.dir, 'fresh', '.git')}`);
    expect(keyOf(bus.root, join(r.plain, 'notes.md'), '/', () => null)).toEqual({ project: 'dir:/', worktree: '/', rel: join(r.plain, 'notes.md').slice(1) });
  });
});

describe('globs', () => {
  const table: [string, string, boolean][] = [
    ['src/a.ts', 'src/a.ts', true],
    ['src/a.ts', 'src/a.tsx', false],
    ['src', 'src/deep/a.ts', true],
    ['src', 'srcs/a.ts', false],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'src/deep/er/a.ts', true],
    ['src/**', 'src/deep/a.ts', true],
    ['src/*', 'src/deep/a.ts', true], // a directory it matches holds what is under it
    ['src/?.ts', 'src/ab.ts', false],
    ['src/[ab].ts', 'src/b.ts', true],
    ['src/[!ab].ts', 'src/b.ts', false],
    ['a.b', 'axb', false], // a dot is a dot
    ['', 'anything/at/all', true],
  ];
  it.each(table)('%s covers %s: %s', (pattern, rel, want) => {
    expect(covers(pattern, rel)).toBe(want);
  });

  it('overlap: either covers the other', () => {
    expect(overlaps('src', 'src/a.ts')).toBe(true);
    expect(overlaps('src/a.ts', 'src/**')).toBe(true);
    expect(overlaps('src/a.ts', 'lib/a.ts')).toBe(false);
  });
});

describe('when a claim holds', () => {
  const claim = (over: Partial<Claim> & { holder: Claim['holder'] }, now: number): Claim => ({ v: 1, project: 'git:abc', worktree: '/w', pattern: 'src/a.ts', at: now - 1000, expires: now + 60_000, ...over });

  it('until its TTL, and while its holder process runs with the start time it recorded', () => {
    const now = Date.now();
    const live = claim({ holder: { id: 's-live', kind: 'agent', name: 'live', pid: process.pid, procStart: procStart(process.pid) } }, now);
    const recycled = claim({ pattern: 'b', holder: { id: 's-gone', kind: 'agent', name: 'gone', pid: process.pid, procStart: '1' } }, now);
    const expired = claim({ pattern: 'c', holder: { id: 's-live', kind: 'agent', name: 'live', pid: process.pid, procStart: procStart(process.pid) }, expires: now - 1 }, now);
    const person = claim({ pattern: 'd', holder: { id: 'ann', kind: 'human', name: 'ann' }, expires: now + 120_000 }, now);
    const silent = claim({ pattern: 'e', holder: { id: 'codex-1', kind: 'agent', name: 'codex' } }, now);
    for (const c of [live, recycled, expired, person, silent]) writeClaim(bus.root, c);
    expect(readClaims(bus.root)).toHaveLength(5);
    expect(liveClaims(bus.root, now).map((c) => c.pattern).sort()).toEqual(['d', 'src/a.ts']);
    // Past its TTL a claim does not hold; the person's, with a longer one, still does.
    expect(liveClaims(bus.root, now + 61_000).map((c) => c.pattern)).toEqual(['d']);
    removeClaim(bus.root, person);
    expect(liveClaims(bus.root, now).map((c) => c.pattern)).toEqual(['src/a.ts']);
  });

  it('a file is held by others, never by its own holder, and only in its project', () => {
    const now = Date.now();
    const c = claim({ pattern: 'src', holder: { id: 'ann', kind: 'human', name: 'ann' } }, now);
    expect(claimsOn([c], { project: 'git:abc', worktree: '/other', rel: 'src/x.ts' }, 'bob')).toEqual([c]);
    expect(claimsOn([c], { project: 'git:abc', worktree: '/other', rel: 'src/x.ts' }, 'ann')).toEqual([]);
    expect(claimsOn([c], { project: 'git:def', worktree: '/w', rel: 'src/x.ts' }, 'bob')).toEqual([]);
  });

  it('a torn or foreign claim file is no claim', () => {
    const now = Date.now();
    writeClaim(bus.root, claim({ holder: { id: 'ann', kind: 'human', name: 'ann' } }, now));
    writeFileSync(join(bus.root, 'state', 'claims', 'held', 'torn.json'), '{"v":1,"proj');
    writeFileSync(join(bus.root, 'state', 'claims', 'held', 'foreign.json'), JSON.stringify({ v: 2, hello: 'x' }));
    expect(readClaims(bus.root).map((c) => c.holder.id)).toEqual(['ann']);
  });
});
