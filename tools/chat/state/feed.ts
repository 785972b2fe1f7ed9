// The feed and its tabs as a pure reducer: which messages are in memory, which tab is
// shown, unread counts, scroll position, notices. IO (reading the bus, the clock) stays in
// hooks; everything here is data in, data out.

import type { Message } from '../../bus/store/index.js';
import { isDirectMail } from '../../wire/visibility.js';
import { countLines, MAX_BODY_LINES } from './lines.js';
import type { ChatMessage, FeedItem, Notice } from './items.js';

export type { ChatMessage, FeedItem, Notice } from './items.js';

/** `merged`, `#open`, `#<channel>`, `direct`. */
type TabId = string;

/** Messages kept in memory while following the newest (issue #5 §4). */
export const MEMORY_CAP = 5000;

export interface FeedState {
  me: string;
  messages: ChatMessage[];
  byId: ReadonlyMap<string, ChatMessage>;
  channels: string[];
  active: TabId;
  unread: Record<TabId, number>;
  /** Rows scrolled up from the newest; 0 follows new messages. */
  scroll: number;
  width: number;
  /** Body rows per message at the current terminal height. */
  maxBody: number;
  clearedAt: Record<TabId, number>;
  notices: Notice[];
  /** Older messages exist on disk than the oldest in memory. */
  hasOlder: boolean;
  /** Feed rows on screen, so a selection can be kept in view. */
  height: number;
  /**
   * The message picked with Alt-↑/↓ (issue #5: `/reply` answers "the selected or newest
   * message"); null when nothing is selected. Always a message of the active tab.
   */
  selected: string | null;
}

export type FeedAction =
  | { type: 'loaded'; messages: Message[]; hasOlder: boolean }
  | { type: 'arrived'; messages: Message[] }
  | { type: 'older'; messages: Message[]; hasOlder: boolean }
  | { type: 'channels'; names: string[] }
  | { type: 'switch'; tab: TabId }
  | { type: 'cycle'; delta: number }
  | { type: 'scroll'; delta: number; max?: number }
  | { type: 'resize'; width: number; maxBody?: number; height?: number }
  /** Move the selection: -1 one message older (up), +1 one newer; past the newest clears it. */
  | { type: 'select'; delta: number }
  | { type: 'unselect' }
  | { type: 'notice'; text: string; level?: 'info' | 'error'; time: number }
  | { type: 'clear'; time: number };

export function initialFeed(me: string, width = 100): FeedState {
  return { me, messages: [], byId: new Map(), channels: [], active: 'merged', unread: {}, scroll: 0, width, maxBody: MAX_BODY_LINES, clearedAt: {}, notices: [], hasOlder: false, height: 20, selected: null };
}

export function tabsOf(s: Pick<FeedState, 'channels'>): TabId[] {
  return ['merged', '#open', ...s.channels.map((c) => `#${c}`), 'direct'];
}

/** The direct tab's messages: mail that names its recipients, sent by me or naming me. */
export function isDirect(msg: Message, me: string): boolean {
  return isDirectMail(msg, me);
}

/** The tabs a message shows in. */
export function tabsFor(msg: ChatMessage, me: string): TabId[] {
  const out: TabId[] = ['merged'];
  for (const s of msg.scopes) {
    if (s.kind === 'open') out.push('#open');
    else if (s.kind === 'channel') out.push(`#${s.name}`);
  }
  if (isDirect(msg, me)) out.push('direct');
  return [...new Set(out)];
}

function compare(a: Message, b: Message): number {
  return a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Merge new messages in, once per id; returns the ones that were really new. */
function merge(s: FeedState, incoming: Message[]): { messages: ChatMessage[]; byId: Map<string, ChatMessage>; fresh: ChatMessage[] } {
  const byId = new Map(s.byId);
  const fresh: ChatMessage[] = [];
  let changed = false;
  for (const m of incoming) {
    const have = byId.get(m.id);
    if (have) {
      if (!have.scopes.some((sc) => JSON.stringify(sc) === JSON.stringify(m.scope))) {
        const upd: ChatMessage = { ...have, scopes: [...have.scopes, m.scope] };
        byId.set(m.id, upd);
        changed = true;
      }
      continue;
    }
    const cm: ChatMessage = { ...m, scopes: [m.scope] };
    byId.set(m.id, cm);
    fresh.push(cm);
  }
  if (fresh.length === 0 && !changed) return { messages: s.messages, byId, fresh };
  let messages: ChatMessage[];
  const last = s.messages[s.messages.length - 1];
  const sortedFresh = [...fresh].sort(compare);
  if (!changed && (!last || !sortedFresh[0] || compare(last, sortedFresh[0]) <= 0)) messages = [...s.messages, ...sortedFresh];
  else messages = [...byId.values()].sort(compare);
  return { messages, byId, fresh };
}

/** `fresh`: s.byId was built by this reducer step and may be trimmed in place (no second copy). */
function capMemory(s: FeedState, fresh = false): FeedState {
  if (s.scroll > 0 || s.messages.length <= MEMORY_CAP) return s;
  const drop = s.messages.slice(0, s.messages.length - MEMORY_CAP);
  const byId = fresh ? (s.byId as Map<string, ChatMessage>) : new Map(s.byId);
  for (const m of drop) byId.delete(m.id);
  return { ...s, messages: s.messages.slice(-MEMORY_CAP), byId, hasOlder: true };
}

export function feedReducer(s: FeedState, a: FeedAction): FeedState {
  switch (a.type) {
    case 'loaded': {
      const { messages, byId } = merge({ ...s, messages: [], byId: new Map() }, a.messages);
      return capMemory({ ...s, messages, byId, hasOlder: a.hasOlder }, true);
    }
    case 'older': {
      const { messages, byId } = merge(s, a.messages);
      return { ...s, messages, byId, hasOlder: a.hasOlder };
    }
    case 'arrived': {
      const { messages, byId, fresh } = merge(s, a.messages);
      if (fresh.length === 0 && messages === s.messages) return s;
      const unread = { ...s.unread };
      let addRows = 0;
      for (const m of fresh) {
        const tabs = tabsFor(m, s.me);
        if (tabs.includes(s.active)) addRows += countLines({ kind: 'msg', msg: m }, s.width, s.maxBody);
        if (m.fromId === s.me) continue;
        for (const t of tabs) if (t !== s.active) unread[t] = (unread[t] ?? 0) + 1;
      }
      // Scrolled back or with a message selected, the view stays on what the operator is
      // reading.
      const scroll = s.scroll > 0 || s.selected !== null ? s.scroll + addRows : 0;
      return keepSelection(capMemory({ ...s, messages, byId, unread, scroll }, true));
    }
    case 'channels': {
      const names = [...new Set(a.names)].sort();
      if (names.join('\n') === s.channels.join('\n')) return s;
      const next = { ...s, channels: names };
      return tabsOf(next).includes(s.active) ? next : { ...next, active: 'merged', scroll: 0, selected: null };
    }
    case 'switch': {
      if (!tabsOf(s).includes(a.tab)) return s;
      return { ...s, active: a.tab, scroll: 0, selected: null, unread: { ...s.unread, [a.tab]: 0 } };
    }
    case 'cycle': {
      const tabs = tabsOf(s);
      const i = tabs.indexOf(s.active);
      const next = tabs[(i + a.delta + tabs.length * 4) % tabs.length] ?? 'merged';
      return feedReducer(s, { type: 'switch', tab: next });
    }
    case 'scroll': {
      let scroll = Math.max(0, s.scroll + a.delta);
      if (a.max !== undefined) scroll = Math.min(scroll, a.max);
      return scroll === s.scroll ? s : capMemory({ ...s, scroll });
    }
    case 'resize': {
      const maxBody = a.maxBody ?? s.maxBody;
      const height = a.height ?? s.height;
      if (a.width === s.width && maxBody === s.maxBody && height === s.height) return s;
      return revealSelected({ ...s, width: a.width, maxBody, height, scroll: 0 });
    }
    case 'notice': {
      const notice: Notice = { key: `n${s.notices.length}-${a.time}`, time: a.time, text: a.text, level: a.level ?? 'info', tab: s.active };
      return revealSelected({ ...s, notices: [...s.notices, notice].slice(-200), scroll: 0 });
    }
    case 'clear':
      return { ...s, clearedAt: { ...s.clearedAt, [s.active]: a.time }, notices: s.notices.filter((n) => n.tab !== s.active), scroll: 0, selected: null };
    case 'select': {
      const ids = visibleItems(s).flatMap((it) => (it.kind === 'msg' ? [it.msg.id] : []));
      if (ids.length === 0) return s.selected === null ? s : { ...s, selected: null };
      const at = s.selected === null ? -1 : ids.indexOf(s.selected);
      // From no selection, up picks the newest message of another party (what one answers;
      // one's own newest is a step below it), else the newest; down has nothing to move to.
      const other = newestFromOthers(s);
      const start = other !== undefined ? ids.indexOf(other.id) : ids.length - 1;
      const next = at < 0 ? (a.delta < 0 ? start + a.delta + 1 : ids.length) : at + a.delta;
      // Past the newest: back to composing for the tab, following new messages.
      if (next >= ids.length) return s.selected === null ? s : { ...s, selected: null, scroll: 0 };
      const selected = ids[Math.max(0, next)] ?? null;
      return selected === s.selected ? s : revealSelected({ ...s, selected });
    }
    case 'unselect':
      return s.selected === null ? s : { ...s, selected: null };
  }
}

/** A selection whose message left memory or the tab is dropped. */
function keepSelection(s: FeedState): FeedState {
  return s.selected === null || s.byId.has(s.selected) ? s : { ...s, selected: null };
}

/**
 * Scroll just enough that the selected message is on screen: its rows, counted from the
 * bottom the way visibleWindow lays them out, fall inside [scroll, scroll + height).
 */
function revealSelected(s: FeedState): FeedState {
  if (s.selected === null) return s;
  const items = visibleItems(s);
  let below = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i] as FeedItem;
    const rows = countLines(it, s.width, s.maxBody);
    if (it.kind === 'msg' && it.msg.id === s.selected) {
      let scroll = s.scroll;
      if (below < scroll) scroll = below;
      if (below + rows > scroll + s.height) scroll = below + rows - s.height;
      return scroll === s.scroll ? s : { ...s, scroll };
    }
    below += rows;
  }
  return { ...s, selected: null };
}

/** The selected message, when there is one. */
export function selectedMessage(s: FeedState): ChatMessage | undefined {
  return s.selected === null ? undefined : s.byId.get(s.selected);
}

/** What the active tab shows, oldest first: its messages and its notices. */
export function visibleItems(s: FeedState): FeedItem[] {
  const cleared = s.clearedAt[s.active] ?? -Infinity;
  const out: FeedItem[] = [];
  for (const m of s.messages) {
    if (m.time <= cleared) continue;
    if (s.active === 'merged' || tabsFor(m, s.me).includes(s.active)) out.push({ kind: 'msg', msg: m });
  }
  const notices = s.notices.filter((n) => n.tab === s.active);
  if (notices.length === 0) return out;
  for (const n of notices) {
    // Notices are few: insert each at its time.
    let i = out.length;
    while (i > 0 && timeOf(out[i - 1] as FeedItem) > n.time) i--;
    out.splice(i, 0, { kind: 'notice', notice: n });
  }
  return out;
}

function timeOf(it: FeedItem): number {
  return it.kind === 'msg' ? it.msg.time : it.notice.time;
}

/** The newest message in the active tab that someone else wrote: the target of /reply. */
export function newestFromOthers(s: FeedState): ChatMessage | undefined {
  const items = visibleItems(s);
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i] as FeedItem;
    if (it.kind === 'msg' && it.msg.fromId !== s.me) return it.msg;
  }
  return undefined;
}
