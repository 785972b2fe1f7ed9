// Issue 23 §1, ask and wait, over real processes: a waiting `attend ask` (and `send --wait`)
// returns the reply another party writes, only when the reply is from an addressee and its
// `re` chain reaches the question; `--wait shown` returns once the addressee's drain showed
// it; a timeout exits 6 and says who has and has not been shown it.

import { describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { runBin, useTempBus, waitFor } from '../helpers/bus.js';
import { type SensorProc, startAttend, startSensor } from '../helpers/delivery.js';

const session = useTempBus(() => {});

interface Listed {
  id: string;
  body: string;
  urgency: string | null;
}

/** The newest message `env`'s party receives whose body is `body`. */
function receivedMessage(env: Record<string, string>, cwd: string, body: string): Listed | undefined {
  const r = runBin(['inbox', '--json'], { env, cwd });
  return (JSON.parse(r.stdout) as { messages: Listed[] }).messages.find((m) => m.body === body);
}

/** Its id. */
function received(env: Record<string, string>, cwd: string, body: string): string | undefined {
  return receivedMessage(env, cwd, body)?.id;
}

const done = async (p: SensorProc) => ({ code: await p.exited, stdout: p.stdout(), stderr: p.stderr() });

describe('attend ask (issue 23 §1)', () => {
  it('returns the reply another session writes, and exits 0', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const ask = startAttend(['ask', 'api', 'which port?', '--timeout', '60s'], lead.env, lead.cwd);
    const id = await waitFor(() => received(api.env, api.cwd, 'which port?'), { what: 'the question in api\'s inbox' });
    const r = runBin(['reply', '--re', id, 'port 8080'], { env: api.env, cwd: api.cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = await done(ask);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`re: ${id}`);
    expect(out.stdout).toContain('  port 8080');
    expect(out.stdout).toMatch(/from: api \(agent/);
  });

  it('a reply from someone it was not for does not end the wait; an addressee\'s reply to that reply does', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const web = session({ name: 'web' });
    const ask = startAttend(['send', '--to', 'api', 'ship it?', '--wait', 'reply', '--timeout', '60s', '--json'], lead.env, lead.cwd);
    const id = await waitFor(() => received(api.env, api.cwd, 'ship it?'), { what: 'the question in api\'s inbox' });
    const aside = runBin(['send', '--to', 'lead', '--re', id, 'not me, but I vote yes', '--json'], { env: web.env, cwd: web.cwd });
    expect(aside.exitCode, aside.stderr).toBe(0);
    const asideId = (JSON.parse(aside.stdout) as { id: string }).id;
    const answer = runBin(['send', '--to', 'lead', '--re', asideId, 'agreed, shipping'], { env: api.env, cwd: api.cwd });
    expect(answer.exitCode, answer.stderr).toBe(0);
    const out = await done(ask);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as { id: string; wait: { mode: string; reply: { body: string; re: string; fromId: string } } };
    expect(r.id).toBe(id);
    expect(r.wait.mode).toBe('reply');
    expect(r.wait.reply).toMatchObject({ body: 'agreed, shipping', re: asideId, fromId: api.sessionId });
  });

  it('--wait shown returns once the addressee\'s drain has shown it, and names the conduit', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const wait = startAttend(['send', '--to', 'api', 'heads up: schema v2', '--wait', 'shown', '--timeout', '60s'], lead.env, lead.cwd);
    await waitFor(() => received(api.env, api.cwd, 'heads up: schema v2'), { what: 'the message in api\'s tray' });
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: api.env, cwd: api.cwd });
    expect(drain.stdout).toContain('heads up: schema v2');
    const out = await done(wait);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^\S+ shown to api \(Stop hook\)\n$/);
  });

  it('a timeout exits 6 and says who has and has not been shown it; the message stays', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const r = runBin(['ask', 'api', 'anyone there?', '--timeout', '300ms'], { env: lead.env, cwd: lead.cwd });
    expect(r.exitCode).toBe(EXIT.timeout);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^attend: waits for api, live, no conduit running\nattend: no reply to \S+ within 300ms: shown to nobody yet; not shown to api; the message stays; attend inbox --thread \S+ shows any later answer\n$/);
    expect(received(api.env, api.cwd, 'anyone there?')).toBeDefined();
  });

  it('refuses a bad --wait or --timeout before anything is sent (exit 2)', () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    for (const args of [['send', '--to', 'api', 'x', '--wait', 'forever'], ['ask', 'api', 'x', '--timeout', 'soon'], ['send', '--to', 'api', 'x', '--timeout', '5s']]) {
      const r = runBin(args, { env: lead.env, cwd: lead.cwd });
      expect(r.exitCode, args.join(' ')).toBe(EXIT.usage);
      expect(r.stderr).toMatch(/^attend: .*(--wait|--timeout)/);
    }
    for (const args of [['ask', 'api', 'x', '--urgent', '--quiet'], ['send', '--to', 'api', 'x', '--wait', 'reply', '--quiet', '--urgent']]) {
      const r = runBin(args, { env: lead.env, cwd: lead.cwd });
      expect(r.exitCode, args.join(' ')).toBe(EXIT.usage);
      expect(r.stderr).toBe('attend: a message is urgent or quiet, not both\n');
    }
    expect(received(api.env, api.cwd, 'x')).toBeUndefined();
  });
});

describe('ask composes with attention and search (issue 23 §1, §3, §4)', () => {
  it('attend ask --urgent sends the question urgent; search finds it, marked; the reply ends the wait', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const ask = startAttend(['ask', '--urgent', 'api', 'is the users table frozen?', '--timeout', '60s', '--json'], lead.env, lead.cwd);
    const q = await waitFor(() => receivedMessage(api.env, api.cwd, 'is the users table frozen?'), { what: 'the question in api\'s inbox' });
    expect(q.urgency).toBe('urgent');
    const found = runBin(['search', 'frozen', '--json'], { env: api.env, cwd: api.cwd });
    expect(found.exitCode, found.stderr).toBe(0);
    expect((JSON.parse(found.stdout) as { hits: Listed[] }).hits).toEqual([expect.objectContaining({ id: q.id, urgency: 'urgent' })]);
    const plain = runBin(['search', 'frozen'], { env: api.env, cwd: api.cwd });
    expect(plain.stdout).toMatch(/\nurgency: urgent\n  is the users table frozen\?/);
    expect(runBin(['reply', '--re', q.id, 'yes, until 14:00'], { env: api.env, cwd: api.cwd }).exitCode).toBe(0);
    const out = await done(ask);
    expect(out.code, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as { id: string; wait: { reply: { body: string; re: string } } };
    expect(r.id).toBe(q.id);
    expect(r.wait.reply).toMatchObject({ body: 'yes, until 14:00', re: q.id });
  });

  it('send --quiet --wait shown: the sensor is not woken, the turn boundary shows it, and the wait says so', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const sensor = startSensor(api.env, [], api.cwd);
    try {
      await waitFor(() => /sensor/.test(runBin(['peers'], { env: lead.env, cwd: lead.cwd }).stdout), { what: 'api\'s sensor to be live' });
      const wait = startAttend(['send', '--quiet', '--to', 'api', 'FYI: docs regenerated', '--wait', 'shown', '--timeout', '60s'], lead.env, lead.cwd);
      // The send says where it goes before it waits: the next turn, not the sensor.
      await waitFor(() => /attend: at its next turn: api/.test(wait.stderr()), { what: 'the send\'s note' });
      const q = receivedMessage(api.env, api.cwd, 'FYI: docs regenerated');
      expect(q?.urgency).toBe('quiet');
      // A normal message after it: once the sensor printed that, it would have printed the quiet one.
      expect(runBin(['send', '--to', 'api', 'control'], { env: lead.env, cwd: lead.cwd }).exitCode).toBe(0);
      await waitFor(() => sensor.stdout().includes('control'), { what: 'the sensor to print the control' });
      expect(sensor.stdout()).not.toContain('FYI: docs regenerated');
      expect(wait.stdout()).toBe('');
      const drained = runBin(['inbox', '--drain', '--format', 'plain'], { env: api.env, cwd: api.cwd });
      expect(drained.stdout).toContain('FYI: docs regenerated');
      const out = await done(wait);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toMatch(/^\S+ shown to api \(Stop hook\)\n$/);
    } finally {
      sensor.proc.kill();
      await sensor.exited;
    }
  });
});

describe('attend send --wait shown with a sensor (issue 23 §1)', () => {
  it('returns when the addressee\'s sensor shows it, and says so', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    const sensor = startSensor(api.env, [], api.cwd);
    try {
      await waitFor(() => /api/.test(runBin(['peers'], { env: lead.env, cwd: lead.cwd }).stdout) && /sensor/.test(runBin(['peers'], { env: lead.env, cwd: lead.cwd }).stdout), { what: 'api\'s sensor to be live' });
      const r = runBin(['send', '--to', 'api', 'deploy at noon', '--wait', 'shown', '--timeout', '30s'], { env: lead.env, cwd: lead.cwd });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^\S+ shown to api \(sensor\)\n$/);
      await waitFor(() => sensor.stdout().includes('deploy at noon'), { what: 'the sensor to print it' });
    } finally {
      sensor.proc.kill();
      await sensor.exited;
    }
  });
});
