// attend's signer, in-process on a real temporary bus (issue 20 §7): what it answers for the
// session the kernel named, what it refuses whatever the request says, and a signature from it
// that readers verify as the session's.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readMessage, silentReporter, writeSignal } from '../../tools/bus/store/messages.js';
import { createSignerService, inClaudeSandbox, sandboxSigner, signerPort } from '../../tools/bus/trust/signer.js';
import type { Signer } from '../../tools/bus/trust/signing.js';
import type { SessionRecord } from '../../tools/identity/resolve.js';
import { type Envelope, type Scope, formatSignal } from '../../tools/wire/envelope.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { ids } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const OPEN: Scope = { kind: 'open' };
const session: SessionRecord = { pid: 4242, sessionId: 'sid-w', cwd: '/srv/w', name: 'worker', kind: 'interactive' };
const service = () => createSignerService({ root: bus.root, keysDir: join(bus.home, '.config', 'attend', 'keys'), host: 'devbox', now: Date.now });
const line = (over: Partial<Envelope> = {}) => formatSignal({ from: 'claude:sid-w', project: 'w', cwd: '/srv/w', fromKind: 'agent', fromId: 'sid-w', to: '*', body: 'hello', ...over });
const ask = (answer: ReturnType<typeof service>, path: string, body: unknown) => {
  const a = answer(session, path, JSON.stringify(body));
  return { status: a.status, ...(JSON.parse(a.body) as Record<string, unknown>) } as { status: number; [k: string]: unknown };
};

describe('attend signer', () => {
  it('tells a session who it is, from the record the kernel named, and the bus it signs for', () => {
    expect(ask(service(), '/whoami', {})).toEqual({ status: 200, session: { sessionId: 'sid-w', pid: 4242, cwd: '/srv/w', name: 'worker', kind: 'interactive', root: bus.root } });
  });

  it("signs the session's own line, and readers verify it as the session's", () => {
    const answer = service();
    const remote: Signer = {
      sidecar: (id, scope, env) => ask(answer, '/sign', { root: bus.root, id, scope, line: formatSignal(env) }).sidecar as string,
    };
    const id = ids()();
    writeSignal(bus.root, OPEN, id, { from: 'claude:sid-w', project: 'w', cwd: '/srv/w', fromKind: 'agent', fromId: 'sid-w', to: '*', body: 'hello' }, remote);
    expect(readMessage(bus.root, OPEN, id, silentReporter)).toMatchObject({ sig: 'ok', fromId: 'sid-w' });
  });

  it('refuses a line written as anyone else: another session, the person, a kind that disagrees', () => {
    const answer = service();
    for (const over of [{ fromId: 'sid-lead', from: 'claude:sid-lead' }, { fromId: 'aaron', from: 'external:aaron', fromKind: 'human' as const }, { fromKind: 'human' as const }, { from: 'claude:sid-lead' }]) {
      const r = ask(answer, '/sign', { root: bus.root, id: ids()(), scope: OPEN, line: line(over) });
      expect(r.status, JSON.stringify(over)).toBe(403);
      expect(r.error).toContain('this connection is session sid-w');
    }
  });

  it('refuses another bus, a bad id, scope or line, an unknown request and a body that is not JSON', () => {
    const answer = service();
    const id = ids()();
    expect(ask(answer, '/sign', { root: '/elsewhere', id, scope: OPEN, line: line() })).toMatchObject({ status: 409, error: expect.stringContaining(bus.root) });
    expect(ask(answer, '/sign', { root: bus.root, id: '../x', scope: OPEN, line: line() }).status).toBe(400);
    expect(ask(answer, '/sign', { root: bus.root, id, scope: { kind: 'tray', key: 'a/../b c' }, line: line() }).status).toBe(400);
    expect(ask(answer, '/sign', { root: bus.root, id, scope: OPEN, line: 'not a line' }).status).toBe(400);
    expect(ask(answer, '/keys', {}).status).toBe(400);
    expect(answer(session, '/sign', '{').status).toBe(400);
  });
});

describe('where a command asks', () => {
  it('inside the sandbox: marked by the sandbox runtime, or seen from the bwrap that made its pid namespace', () => {
    const bwrap = ['bwrap', '--new-session', '--setenv', 'SANDBOX_RUNTIME', '1', '--unshare-pid', '--', '/bin/bash'].join('\0');
    expect(inClaudeSandbox({ SANDBOX_RUNTIME: '1' }, () => '/sbin/init\0')).toBe(true);
    expect(inClaudeSandbox({}, () => bwrap)).toBe(true);
    expect(inClaudeSandbox({}, () => '/sbin/init\0')).toBe(false);
    expect(inClaudeSandbox({}, () => 'bwrap\0--unshare-pid\0--\0flatpak-app')).toBe(false);
    expect(inClaudeSandbox({}, () => {
      throw new Error('no /proc');
    })).toBe(false);
  });

  it('the signer ATTEND_SIGNER names, on 127.0.0.1 only, through the proxy with its credentials', () => {
    const env = { ATTEND_SIGNER: '127.0.0.1:24567', HTTP_PROXY: 'http://srt.abc:p%40ss@127.0.0.1:3128' };
    expect(sandboxSigner(env)).toEqual({ port: 24567, proxy: { host: '127.0.0.1', port: 3128, auth: Buffer.from('srt.abc:p@ss').toString('base64') } });
    expect(sandboxSigner({ ATTEND_SIGNER: '127.0.0.1:24567' })).toEqual({ port: 24567 });
    expect(sandboxSigner({ ...env, ATTEND_SIGNER: '10.0.0.1:24567' })).toBeNull();
    expect(signerPort({ ATTEND_SIGNER: '127.0.0.1:70000' })).toBeNull();
    expect(signerPort({})).toBeNull();
  });
});
