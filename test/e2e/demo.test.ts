import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { BIN, ME, type TempBus, makeTempBus, runBin, waitFor } from '../helpers/bus.js';

let bus: TempBus;
beforeEach(() => {
  bus = makeTempBus();
});
afterEach(() => bus.cleanup());

/** Processes whose command line mentions `text` (the demo passes its dir to its stand-ins). */
function processesMentioning(text: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(text)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

describe('attend demo', () => {
  it('walks through a conversation on a temporary bus, exits 0 and removes it', async () => {
    const r = runBin(['demo'], { env: bus.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = r.stdout;
    const tmp = /attend demo: a temporary bus at (\S+)\/bus\n/.exec(out)?.[1];
    expect(tmp).toBeDefined();
    // Identity resolves through real session records.
    expect(out).toMatch(/▸ api \(Claude Code session\) \$ attend whoami\n  api \(agent\)\n/);
    expect(out).toMatch(/resolved: yes \(ancestor pid \d+ \(1 up\) has a live session record\)/);
    // web sees both the broadcast and the person's directed message.
    const webInbox = out.slice(out.indexOf('$ attend inbox    # web sees'), out.indexOf('$ attend reply'));
    expect(webInbox).toContain('please review the migration api is running');
    expect(webInbox).toContain('starting the schema migration');
    // The thread step finds web's reply and shows it under the person's message.
    const thread = out.slice(out.indexOf('$ attend inbox --thread'));
    expect(thread.indexOf('please review the migration')).toBeGreaterThan(0);
    expect(thread.indexOf('looking now; the users index')).toBeGreaterThan(thread.indexOf('please review the migration'));
    // The refusal is shown with its exit code and lists who is live.
    const refusal = /attend: no known recipient 'nobody-here'; live: (.*)\n  \(exit 1\)/.exec(out)?.[1] ?? '';
    expect(refusal.split(/, (?=\S+ \()/).map((p) => p.split(' (')[0]).sort()).toEqual(['api', ME, 'web'].sort());
    expect(refusal).toContain(`${ME} (human)`);
    expect(out).toMatch(/signals\/_broadcast\/[0-9a-z-]+\.signal/);
    // Nothing is left behind: not the directory, not the stand-in session processes.
    expect(existsSync(tmp!)).toBe(false);
    await waitFor(() => processesMentioning(tmp!).length === 0, { what: 'stand-in sessions to end' });
    // The user's own bus was never touched.
    expect(existsSync(bus.root)).toBe(false);
  });

  it('--keep keeps the temporary bus and says where', async () => {
    const r = runBin(['demo', '--keep'], { env: bus.env });
    expect(r.exitCode).toBe(0);
    const kept = /\nkept: (\S+)\n/.exec(r.stdout)?.[1];
    expect(kept).toBeDefined();
    expect(readdirSync(`${kept}/bus/signals`)).toContain('_broadcast');
    await waitFor(() => processesMentioning(kept!).length === 0, { what: 'stand-in sessions to end' });
    rmSync(kept!, { recursive: true, force: true });
  });

  it('interrupted mid-way (SIGINT), it still removes its bus and its stand-ins', async () => {
    const child = spawn(process.execPath, [BIN, 'demo'], { env: bus.env, cwd: bus.home, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const tmp = await waitFor(() => /a temporary bus at (\S+)\/bus\n/.exec(out)?.[1], { what: 'the demo to start' });
    await waitFor(() => processesMentioning(tmp).length > 0, { what: 'stand-in sessions to start' });
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(tmp)).toBe(false);
    await waitFor(() => processesMentioning(tmp).length === 0, { what: 'stand-in sessions to end' });
  });
});
