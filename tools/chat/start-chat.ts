// The lifecycle of one `attend chat` (issue #5 §5): human identity, heartbeat, the
// alternate screen, Ink, and a terminal restored on every way out (quit, SIGTERM, SIGHUP,
// a crash). Loaded lazily by tools/cli/commands/chat.ts (through load.ts) so Ink and React
// never load for `attend send`.

import { type VerbCtx, createVerbCtx } from '../verbs/context.js';
import { createChatActions } from './actions.js';
import { createBusSource } from './bus-source.js';
import { detectColorDepth } from './colors.js';
import { mountChat } from './mount.js';
import { createChatPresence } from './source/heartbeat.js';
import { realTimers } from './source/timers.js';

const ALT_SCREEN_ON = '\x1b[?1049h\x1b[H';
const ALT_SCREEN_OFF = '\x1b[?1049l';
const SHOW_CURSOR = '\x1b[?25h';
// Button events and SGR coordinates: wheel reports without the legacy byte encoding.
const MOUSE_ON = '\x1b[?1000h\x1b[?1006h';
const MOUSE_OFF = '\x1b[?1000l\x1b[?1006l';

interface ChatOptions {
  mouse: boolean;
}

export async function startChat(ctx: VerbCtx, opts: ChatOptions): Promise<number> {
  // Diagnostics written to stderr would tear the screen: verbs get a silent warn sink, and
  // their errors reach the status line.
  const makeCtx = () => createVerbCtx({ env: ctx.env, cwd: ctx.cwd, pid: ctx.pid, now: ctx.now, identity: 'human' });
  const base = makeCtx();
  const me = base.identity();
  const root = base.root();
  const out = process.stdout;

  const presence = createChatPresence({ root, me, pid: ctx.pid, now: ctx.now, timers: realTimers });
  presence.start();

  let mouseOn = false;
  const setMouse = (on: boolean) => {
    mouseOn = on;
    out.write(on ? MOUSE_ON : MOUSE_OFF);
  };
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    presence.stop();
    out.write(`${mouseOn ? MOUSE_OFF : ''}${SHOW_CURSOR}${ALT_SCREEN_OFF}`);
  };

  out.write(ALT_SCREEN_ON);
  if (opts.mouse) setMouse(true);
  const source = createBusSource({ root, reader: me });
  const actions = createChatActions({ makeCtx, root, now: ctx.now });
  const depth = detectColorDepth(ctx.env, true);
  let exitCode = 0;
  // Ink erases its previous frame line by line; after a shrink that frame is taller than
  // the screen and the erase cannot reach its top. Wipe first (this listener runs before
  // Ink's, registered below), then Ink draws the new frame on a clean screen.
  const onResize = () => out.write('\x1b[2J\x1b[H');
  out.on('resize', onResize);
  const instance = mountChat({ me: me.id, source, actions, depth, now: ctx.now, mouse: opts.mouse, setMouse });
  const onSignal = (signal: NodeJS.Signals, code: number) => () => {
    exitCode = 128 + code;
    instance.unmount();
    restore();
    // Anything still holding the loop open (a stuck read) must not keep a dead UI alive.
    setTimeout(() => process.exit(exitCode), 1000).unref();
    void signal;
  };
  const onTerm = onSignal('SIGTERM', 15);
  const onHup = onSignal('SIGHUP', 1);
  process.once('SIGTERM', onTerm);
  process.once('SIGHUP', onHup);
  process.once('exit', restore);
  try {
    await instance.waitUntilExit();
  } finally {
    source.stop();
    restore();
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onHup);
    process.off('exit', restore);
    out.off('resize', onResize);
  }
  return exitCode;
}
