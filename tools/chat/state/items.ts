// What the feed holds, as types of their own so the line renderer (lines.ts) and the
// reducer (feed.ts) share them without importing each other.

import type { Message } from '../../bus/store/index.js';
import type { Scope } from '../../wire/envelope.js';

/** A message once, with every directory a fan-out put it in. */
export interface ChatMessage extends Message {
  scopes: Scope[];
}

export interface Notice {
  key: string;
  time: number;
  text: string;
  level: 'info' | 'error';
  /** The tab it was raised in; it shows only there. */
  tab: string;
}

export type FeedItem = { kind: 'msg'; msg: ChatMessage } | { kind: 'notice'; notice: Notice };
