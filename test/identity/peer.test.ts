// Who is at the other end of a loopback connection (issue 20 §7): the kernel's socket table
// and the holder's session record, never anything the peer says. A real connection in this
// process, a real session record for this process.
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackEndpoint, parseProcNetTcp, peerSession } from '../../tools/identity/peer.js';
import { systemReaders } from '../../tools/identity/system.js';
import { type TempBus, procStart, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

let server: Server | undefined;
let client: Socket | undefined;
afterEach(() => {
  client?.destroy();
  server?.close();
  server = client = undefined;
});

async function connection(): Promise<{ remotePort: number; localPort: number }> {
  server = createServer(() => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const localPort = (server.address() as AddressInfo).port;
  client = connect(localPort, '127.0.0.1');
  await once(client, 'connect');
  return { remotePort: client.localPort!, localPort };
}

const sessionsDir = () => join(bus.claudeDir, 'sessions');
const readers = () => systemReaders({ env: {}, sessionsDir: sessionsDir(), cwd: '/', pid: process.pid });

function recordSelf(sessionId: string, start = procStart(process.pid)): void {
  mkdirSync(sessionsDir(), { recursive: true });
  writeFileSync(join(sessionsDir(), `${process.pid}.json`), JSON.stringify({ pid: process.pid, sessionId, cwd: '/srv/w', procStart: start }));
}

describe('the peer of a loopback connection', () => {
  it('is the session whose claude process holds the socket', async () => {
    const c = await connection();
    recordSelf('sid-self');
    expect(peerSession({ ...c, readers: readers(), sessionPids: [process.pid] })).toMatchObject({ ok: true, pid: process.pid, record: { sessionId: 'sid-self' } });
  });

  it('is no session when the holder has no live record (a recycled pid: another start time)', async () => {
    const c = await connection();
    recordSelf('sid-old', '1');
    expect(peerSession({ ...c, readers: readers(), sessionPids: [process.pid] })).toMatchObject({ ok: false });
  });

  it("is refused when the kernel says another user's socket, or no such connection", async () => {
    const c = await connection();
    recordSelf('sid-self');
    const row = (uid: number) => `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: ${loopbackEndpoint(c.remotePort)} ${loopbackEndpoint(c.localPort)} 01 00000000:00000000 00:00000000 00000000  ${uid}        0 123456 1 0000000000000000 20 4 30 10 -1\n`;
    expect(peerSession({ ...c, readers: readers(), sessionPids: [process.pid], table: row(process.getuid!() + 1) })).toEqual({ ok: false, reason: `the peer runs as uid ${process.getuid!() + 1}, not ${process.getuid!()}` });
    expect(peerSession({ ...c, remotePort: 1, readers: readers(), sessionPids: [process.pid] })).toMatchObject({ ok: false, reason: expect.stringContaining('no socket') });
  });

  it('parses /proc/net/tcp rows and skips what is not one', () => {
    const text = 'header\n   0: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 98765 1\ngarbage\n';
    expect(parseProcNetTcp(text)).toEqual([{ local: '0100007F:1F90', remote: '0100007F:C350', uid: 1000, inode: '98765' }]);
    expect(loopbackEndpoint(8080)).toBe('0100007F:1F90');
  });
});
