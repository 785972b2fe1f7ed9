// Ids from real processes racing each other (the id rules' unit tests are in
// test/wire/ids.test.ts).

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ID_SHAPE = /^[0-9a-z]{12}-[0-9a-z]{8}$/;

describe('ids from real processes', () => {
  it('8 processes × 2,000 ids: no collision, each process strictly increasing', async () => {
    const ids = fileURLToPath(new URL('../../dist/tools/wire/ids.js', import.meta.url));
    // A barrier: every child says it is ready, then all are released at once, so the eight
    // really do issue ids in the same milliseconds.
    const script = `
      const { createIdFactory } = await import(${JSON.stringify(ids)});
      const next = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => {
        const out = [];
        for (let i = 0; i < 2000; i++) out.push(next());
        process.stdout.write(out.join('\\n'));
        process.stdin.destroy();
      });
    `;
    const children = Array.from({ length: 8 }, () => {
      const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      const ready = new Promise<void>((resolve) => p.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.startsWith('ready\n')) resolve();
      }));
      const done = new Promise<string[]>((resolve, reject) => {
        p.on('error', reject);
        p.on('close', (code) => (code === 0 ? resolve(out.slice('ready\n'.length).split('\n')) : reject(new Error(`child exited ${code}`))));
      });
      return { p, ready, done };
    });
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.p.stdin.write('go');
    const runs = await Promise.all(children.map((c) => c.done));
    const all = runs.flat();
    expect(all).toHaveLength(16_000);
    expect(new Set(all).size).toBe(16_000);
    for (const list of runs) {
      for (const id of list) expect(id).toMatch(ID_SHAPE);
      for (let i = 1; i < list.length; i++) expect(list[i]! > list[i - 1]!).toBe(true);
    }
  });
});
