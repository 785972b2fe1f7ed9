// Benchmark for `attend chat` (issue #5): the first frame with 10,000 messages of history,
// and keystroke-to-rendered-character while 50 messages/s arrive on the bus. Drives the
// built App through Ink's own render with in-memory streams (the same options start-chat
// uses), on a real temporary bus with real files.

import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

class FakeStdout extends EventEmitter {
  columns = 100;
  rows = 30;
  isTTY = true;
  last = '';
  onWrite = null;
  write(s) {
    this.last = s;
    this.onWrite?.(s);
    return true;
  }
}
class FakeStdin extends EventEmitter {
  isTTY = true;
  data = null;
  setEncoding() {}
  setRawMode() {}
  ref() {}
  unref() {}
  resume() {}
  pause() {}
  read() {
    const d = this.data;
    this.data = null;
    return d;
  }
  send(s) {
    this.data = s;
    this.emit('readable');
  }
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

export default async function ({ bin, tmp, quick }) {
  const dist = join(dirname(bin), '..');
  const load = (p) => import(pathToFileURL(join(dist, p)).href);
  // The UI modules as `attend chat` loads them (React in production mode); Ink and React are
  // imported only under tools/chat.
  const { loadChatUi } = await load('chat/load.js');
  const { mountChat, createBusSource, createChatActions } = await loadChatUi();
  const { createContext } = await load('cli/context.js');
  const { writeSignal } = await load('bus/store/messages.js');
  const { createIdFactory } = await load('wire/ids.js');

  const root = join(tmp, 'chat-bench-bus');
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const env = { HOME: tmp, ATTEND_HOME: root, USER: 'bench', CLAUDE_CONFIG_DIR: join(tmp, 'claude'), NO_COLOR: '1' };
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const envelope = (body) => ({ from: 'claude:00000000-0000-4000-8000-000000000001', project: 'p', cwd: '/p', fromKind: 'agent', fromId: '00000000-0000-4000-8000-000000000001', to: '*', body });
  const HISTORY = 10_000;
  for (let i = 0; i < HISTORY; i++) writeSignal(root, { kind: 'open' }, newId(), envelope(`history message ${i} ${'lorem ipsum '.repeat(i % 7)}`));

  const makeCtx = () => createContext({ env, cwd: tmp, identity: 'human', stderr: { write: () => true } });
  const mount = () => {
    const stdout = new FakeStdout();
    const stdin = new FakeStdin();
    const source = createBusSource({ root });
    const actions = createChatActions({ makeCtx, root, now: Date.now });
    const t0 = performance.now();
    let firstFrame = 0;
    stdout.onWrite = (s) => {
      if (!firstFrame && s.includes(`history message ${HISTORY - 1}`)) firstFrame = performance.now() - t0;
    };
    const inst = mountChat({ me: 'bench', source, actions, depth: 0, now: Date.now, mouse: false, setMouse: () => {} }, { stdout, stdin, stderr: new FakeStdout() });
    return { inst, stdout, stdin, firstFrame: () => firstFrame };
  };

  const runs = quick ? 2 : 5;
  const first = [];
  for (let r = 0; r < runs; r++) {
    const m = mount();
    const start = Date.now();
    while (!m.firstFrame() && Date.now() - start < 10_000) await new Promise((res) => setImmediate(res));
    first.push(m.firstFrame());
    m.inst.unmount();
  }

  // Keystrokes while 50 messages/s arrive.
  const m = mount();
  await new Promise((res) => setTimeout(res, 300));
  let arrived = 0;
  const writer = setInterval(() => {
    writeSignal(root, { kind: 'open' }, newId(), envelope(`live ${arrived++}`));
  }, 20);
  const keys = quick ? 40 : 150;
  // Drafts stay on one compose row: every ROUND keys the draft is deleted (one chunk of
  // DELs, as a held Backspace arrives) and the next round starts with a capital letter no
  // earlier draft started with, so `> ${typed}` can only match the frame this key produced.
  const ROUND = 40;
  const lat = [];
  let typed = '';
  for (let k = 0; k < keys; k++) {
    if (k > 0 && k % ROUND === 0) {
      const old = `> ${typed}`;
      const cleared = new Promise((res) => {
        m.stdout.onWrite = (s) => {
          if (s.includes('live:') && !s.includes(old)) res();
        };
      });
      m.stdin.send('\x7f'.repeat(typed.length));
      await Promise.race([cleared, new Promise((res) => setTimeout(res, 2000))]);
      typed = '';
    }
    const ch = k % ROUND === 0 ? String.fromCharCode(65 + ((k / ROUND) % 26)) : String.fromCharCode(97 + (k % 26));
    typed += ch;
    const want = `> ${typed}`;
    const t0 = performance.now();
    const done = new Promise((res) => {
      m.stdout.onWrite = (s) => {
        if (s.includes(want)) res(performance.now() - t0);
      };
    });
    m.stdin.send(ch);
    lat.push(await Promise.race([done, new Promise((res) => setTimeout(() => res(1000), 1000))]));
    await new Promise((res) => setTimeout(res, 15 + Math.random() * 30));
  }
  clearInterval(writer);
  m.inst.unmount();

  const f = (x) => `${x.toFixed(1)} ms`;
  const markdown = [
    `History: ${HISTORY.toLocaleString('en-US')} messages in #open on a real temporary bus; terminal 100×30; Ink render with the options \`attend chat\` uses (tools/chat/mount.ts), React production build.`,
    '',
    '| measure | goal | median | p95 | max | runs |',
    '|---|---|---|---|---|---|',
    `| first frame with history | ≤ 500 ms | ${f(pct(first, 50))} | ${f(pct(first, 95))} | ${f(Math.max(...first))} | ${first.length} |`,
    `| keystroke → rendered character, 50 msg/s arriving | ≤ 50 ms | ${f(pct(lat, 50))} | ${f(pct(lat, 95))} | ${f(Math.max(...lat))} | ${lat.length} keys, ${arrived} messages |`,
  ].join('\n');
  return { title: 'attend chat', markdown };
}
