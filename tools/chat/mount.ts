// Mount the chat App with Ink, with the options `attend chat` runs with. start-chat and the
// benchmark (scripts/bench/chat.mjs) both mount through here, so the figures measure the
// same renderer settings the operator gets.

import { render, type Instance } from 'ink';
import { createElement } from 'react';
import { App, type AppProps } from './App.js';

// maxFps is Ink's frame throttle: a keystroke that follows another frame within 1000/maxFps
// ms waits for the throttle's trailing edge. At 60 that wait alone was up to 16 ms of the
// keystroke budget; at 120 it is 8 ms. Arrivals are batched (source/batch.ts), so the higher
// rate only applies to bursts of keys, which are rare and cheap (~5 ms a frame).
export const RENDER_OPTIONS = { exitOnCtrlC: false, patchConsole: false, maxFps: 120 } as const;

interface MountStreams {
  stdout: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  stderr: NodeJS.WriteStream;
}

export function mountChat(props: AppProps, streams: Partial<MountStreams> = {}): Instance {
  return render(createElement(App, props), { ...RENDER_OPTIONS, ...streams });
}
