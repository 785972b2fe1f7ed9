// Mount the chat App with Ink, with the options `attend chat` runs with. start-chat and the
// benchmark (scripts/bench/chat.mjs) both mount through here, so the figures measure the
// same renderer settings the operator gets.

import { render, type Instance } from 'ink';
import { createElement } from 'react';
import { App, type AppProps } from './App.js';

export const RENDER_OPTIONS = { exitOnCtrlC: false, patchConsole: false, maxFps: 60 } as const;

export interface MountStreams {
  stdout: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  stderr: NodeJS.WriteStream;
}

export function mountChat(props: AppProps, streams: Partial<MountStreams> = {}): Instance {
  return render(createElement(App, props), { ...RENDER_OPTIONS, ...streams });
}
