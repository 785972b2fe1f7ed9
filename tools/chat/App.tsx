// The chat screen. State lives in pure reducers (state/*.ts); this file wires keys to
// actions, subscriptions to hooks, and state to rows. The feed is a windowed list rather
// than <Static>: tabs and scroll-back redraw history, which Static output cannot do.

import { Box, type Key, Text, useApp, useInput, useStdin, useStdout } from 'ink';
import { memo, useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { Peer } from '../bus/roster.js';
import type { ChatActions, ChannelInfo } from './actions.js';
import type { BusSource } from './bus-source.js';
import { accent, type ColorDepth, colorFor } from './colors.js';
import { peerStatus } from './peer-status.js';
import { COMMANDS, runSlash } from './slash.js';
import { errorLine } from './hints.js';
import { composeReducer, composeRows, emptyCompose, hasDraft } from './state/compose.js';
import { type FeedState, feedReducer, initialFeed, MEMORY_CAP, newestFromOthers, selectedMessage, tabsOf, visibleItems, isDirect } from './state/feed.js';
import { type Line, type LineContext, MAX_BODY_LINES, visibleWindow } from './state/lines.js';
import { textWidth } from './state/width.js';
import { type Completion, completeAt, type DefaultDest, describeDest, parseAddress, type PeerRef, resolveRoute, unreachableReason } from './state/routing.js';
import { neutralize } from '../wire/render.js';
import { shortId } from '../wire/party.js';

export interface AppProps {
  me: string;
  source: BusSource;
  actions: ChatActions;
  depth: ColorDepth;
  now(): number;
  mouse: boolean;
  /** Turn the terminal's mouse reporting on or off. */
  setMouse(on: boolean): void;
  /** How often the roster is re-read, ms. */
  rosterMs?: number;
  initialLimit?: number;
}

const OLDER_PAGE = 1000;
const MAX_COMPOSE_ROWS = 5;

function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => ({ columns: stdout.columns || 100, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const on = () => setSize(read());
    stdout.on('resize', on);
    return () => {
      stdout.off('resize', on);
    };
  }, [stdout]);
  return size;
}

function Row({ line }: { line: Line }) {
  if (line.length === 0) return <Text> </Text>;
  return (
    <Text wrap="truncate-end">
      {line.map((s, i) => (
        <Text key={i} {...(s.color ? { color: s.color } : {})} bold={s.bold ?? false} dimColor={s.dim ?? false} inverse={s.inverse ?? false}>
          {s.text}
        </Text>
      ))}
    </Text>
  );
}

const Feed = memo(function Feed({ lines, height }: { lines: Line[]; height: number }) {
  const pad = Math.max(0, height - lines.length);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {pad > 0 ? <Box height={pad} /> : null}
      {lines.map((l, i) => (
        <Row key={i} line={l} />
      ))}
    </Box>
  );
});

const TabBar = memo(function TabBar({ feed, depth, width }: { feed: FeedState; depth: ColorDepth; width: number }) {
  const tabs = tabsOf(feed);
  return (
    <Box width={width} height={1} overflow="hidden">
      <Text wrap="truncate-end">
        {tabs.map((t) => {
          const n = feed.unread[t] ?? 0;
          const active = t === feed.active;
          return (
            <Text key={t}>
              <Text inverse={active} bold={active} {...(active ? {} : accent(depth, 'cyan') ? { color: 'cyan' } : {})}>
                {/* Brackets mark the active tab where inverse video is not shown (NO_COLOR, dumb terminals). */}
                {`${active ? '[' : ' '}${t}${n > 0 ? ` (${n})` : ''}${active ? ']' : ' '}`}
              </Text>
              <Text> </Text>
            </Text>
          );
        })}
      </Text>
    </Box>
  );
});

export function App(props: AppProps) {
  const { me, source, actions, depth, now } = props;
  const app = useApp();
  const { internal_eventEmitter } = useStdin();
  const { columns, rows } = useTerminalSize();
  const width = Math.max(20, columns);

  const [feed, dispatch] = useReducer(feedReducer, null, () => {
    const first = source.loadInitial(props.initialLimit ?? MEMORY_CAP);
    let s = feedReducer(initialFeed(me, width), { type: 'loaded', messages: first.messages, hasOlder: first.hasOlder });
    s = feedReducer(s, { type: 'channels', names: [...source.channelDirs(), ...actions.channels().map((c) => c.name)] });
    return s;
  });
  const [compose, cdispatch] = useReducer(composeReducer, undefined, () => emptyCompose());
  const [peers, setPeers] = useState<Peer[]>(() => actions.peers());
  const [chanInfo, setChanInfo] = useState<ChannelInfo[]>(() => actions.channels());
  const [busStatus, setBusStatus] = useState<string | null>(null);
  const [status, setStatus] = useState<{ text: string; level: 'info' | 'error' } | null>(null);
  const [confirmQuit, setConfirmQuit] = useState(false);
  const [mouse, setMouseState] = useState(props.mouse);
  const completion = useRef<Completion | null>(null);
  const lastRaw = useRef('');

  // The store's channel names, for the source's rescans to add to the directories they
  // find. Set here, synchronously, not in an effect: a channel created by a slash command
  // has no directory until its first message, and a rescan that ran before the effect
  // would drop its tab (and move the operator back to merged).
  const chanNames = useRef<string[]>(chanInfo.map((c) => c.name));
  const refreshRoster = useCallback(() => {
    try {
      setPeers(actions.peers());
      const info = actions.channels();
      chanNames.current = info.map((c) => c.name);
      setChanInfo(info);
    } catch (err) {
      setBusStatus(`cannot read the roster: ${(err as Error).message}`);
    }
  }, [actions]);

  useEffect(() => {
    source.start({
      arrived: (messages) => dispatch({ type: 'arrived', messages }),
      status: (text) => setBusStatus(text),
      channels: (names) => dispatch({ type: 'channels', names: [...names, ...chanNames.current] }),
    });
    return () => source.stop();
  }, [source]);
  useEffect(() => {
    dispatch({ type: 'channels', names: [...source.channelDirs(), ...chanNames.current] });
  }, [chanInfo, source]);

  useEffect(() => {
    const t = setInterval(refreshRoster, props.rosterMs ?? 2000);
    return () => clearInterval(t);
  }, [refreshRoster, props.rosterMs]);


  // Layout: tab bar, feed, destination, compose, roster, status. One row is left free at the
  // bottom: a frame as tall as the terminal makes Ink clear the screen on every render.
  const composeView = useMemo(() => composeRows(compose.text, compose.cursor, width - 2), [compose.text, compose.cursor, width]);
  const composeHeight = Math.min(MAX_COMPOSE_ROWS, composeView.rows.length);
  const feedHeight = Math.max(3, rows - 1 - 1 - 1 - composeHeight - 1 - 1);

  const maxBody = Math.min(MAX_BODY_LINES, Math.max(2, feedHeight - 1));
  useEffect(() => {
    dispatch({ type: 'resize', width, maxBody, height: feedHeight });
  }, [width, maxBody, feedHeight]);

  const nameMap = useMemo(() => new Map(peers.map((p) => [p.id, p.name])), [peers]);
  const items = useMemo(() => visibleItems(feed), [feed.messages, feed.active, feed.notices, feed.clearedAt, feed.me]);
  const lc: LineContext = useMemo(
    () => ({
      width,
      me,
      tab: feed.active,
      maxBodyLines: maxBody,
      selected: feed.selected,
      name: (id) => nameMap.get(id) ?? shortId(id),
      colorOf: (id) => colorFor(id, depth),
      parentSender: (id) => {
        const p = feed.byId.get(id);
        return p ? (p.fromId === me ? 'you' : (nameMap.get(p.fromId) ?? p.fromId)) : undefined;
      },
    }),
    [width, me, feed.active, nameMap, depth, feed.byId, maxBody, feed.selected],
  );
  const win = useMemo(() => visibleWindow(items, feedHeight, feed.scroll, lc), [items, feedHeight, feed.scroll, lc]);

  // Scrolled to the top of what is in memory: page older messages in from disk.
  useEffect(() => {
    if (win.atTop && feed.hasOlder && feed.scroll > 0) {
      const older = source.loadOlder(OLDER_PAGE);
      dispatch({ type: 'older', messages: older.messages, hasOlder: older.hasOlder });
    }
  }, [win.atTop, feed.hasOlder, feed.scroll, source]);

  const peerRefs: PeerRef[] = useMemo(() => peers.map((p) => ({ id: p.id, name: p.name, kind: p.kind })), [peers]);
  const sources = useMemo(() => ({ peers: peerRefs, channels: feed.channels, me, commands: Object.keys(COMMANDS) }), [peerRefs, feed.channels, me]);

  const defaultDest = useMemo((): DefaultDest => {
    if (feed.active === 'merged' || feed.active === '#open') return { kind: 'open' };
    if (feed.active.startsWith('#')) return { kind: 'channel', channel: feed.active.slice(1) };
    for (let i = feed.messages.length - 1; i >= 0; i--) {
      const m = feed.messages[i];
      if (!m || !isDirect(m, me)) continue;
      const other = m.fromId === me ? m.to.split(',')[0] : m.fromId;
      const p = peerRefs.find((x) => x.id === other);
      if (p) return { kind: 'direct', to: [p] };
      break;
    }
    return { kind: 'none', reason: 'in the direct tab, start with @Name to pick a recipient' };
  }, [feed.active, feed.messages, peerRefs, me]);

  const isCommand = compose.text.trimStart().startsWith('/');
  const route = useMemo(() => (isCommand ? null : resolveRoute(compose.text, sources, defaultDest)), [compose.text, sources, defaultDest, isCommand]);
  const reach = useMemo(
    () => ({ live: peerRefs, members: (c: string) => chanInfo.find((x) => x.name === c)?.members ?? [] }),
    [peerRefs, chanInfo],
  );
  const warning = route && route.ok ? unreachableReason(route.dest, reach, me) : null;
  // With a message selected, a plain draft is a reply to it; a draft that starts with an
  // address (@Name, #channel) still goes where it says. The destination line tells which.
  const selected = selectedMessage(feed);
  const replyTo = selected && !isCommand && parseAddress(compose.text).tokens.length === 0 ? selected : undefined;
  // `/reply text` answers the selection, else the newest message from someone else here.
  const isReplyCommand = isCommand && /^\/reply(\s|$)/i.test(compose.text.trimStart());
  const replyCommandTarget = useMemo(() => (isReplyCommand ? (selected ?? newestFromOthers(feed)) : undefined), [isReplyCommand, selected, feed]);

  const quit = useCallback(() => app.exit(), [app]);

  const submit = () => {
    const text = compose.text;
    if (text.trim().length === 0) return;
    if (isCommand) {
      const out = runSlash(text, {
        actions,
        tabChannel: feed.active.startsWith('#') && feed.active !== '#open' ? feed.active.slice(1) : null,
        replyTarget: () => {
          const m = replyCommandTarget;
          return m ? { id: m.id, sender: lc.name(m.fromId) } : undefined;
        },
      });
      if (out.switchTo) {
        const target = out.switchTo;
        dispatch({ type: 'channels', names: [...feed.channels, ...(target.startsWith('#') ? [target.slice(1)] : [])] });
        dispatch({ type: 'switch', tab: target });
      }
      // After the switch, so the result shows in the tab the operator lands in.
      for (const l of out.lines) dispatch({ type: 'notice', text: l.text, level: l.level, time: now() });
      if (out.clear) dispatch({ type: 'clear', time: now() });
      if (out.toggleMouse) {
        props.setMouse(!mouse);
        setStatus({ text: `mouse wheel scrolling ${mouse ? 'off' : 'on'}`, level: 'info' });
        setMouseState(!mouse);
      }
      if (out.channelsChanged) refreshRoster();
      if (out.replied) dispatch({ type: 'unselect' });
      if (out.consumed) {
        cdispatch({ type: 'submitted' });
        if (!out.toggleMouse) setStatus(null);
      } else setStatus({ text: out.lines[0]?.text ?? 'command failed', level: 'error' });
      if (out.quit) quit();
      return;
    }
    if (replyTo) {
      try {
        const r = actions.reply(replyTo.id, text);
        cdispatch({ type: 'submitted' });
        dispatch({ type: 'unselect' });
        setStatus({ text: `replied to ${neutralize(lc.name(replyTo.fromId))} (${r.id})${r.notes.length ? ` — ${r.notes.join('; ')}` : ''}`, level: 'info' });
      } catch (err) {
        setStatus({ text: `not sent: ${errorLine(err)}`, level: 'error' });
      }
      return;
    }
    if (!route) return;
    if (!route.ok) return setStatus({ text: `not sent: ${route.reason}`, level: 'error' });
    if (route.body.trim().length === 0) return setStatus({ text: 'not sent: the message is empty', level: 'error' });
    if (warning) return setStatus({ text: `not sent: ${warning}`, level: 'error' });
    try {
      const r = actions.send(route.dest, route.body);
      cdispatch({ type: 'submitted' });
      setStatus({ text: `sent to ${describeDest(route.dest)} (${r.id})`, level: 'info' });
    } catch (err) {
      setStatus({ text: `not sent: ${errorLine(err)}`, level: 'error' });
      refreshRoster();
    }
  };

  useEffect(() => {
    const onRaw = (data: string) => {
      lastRaw.current = data;
      const m = /\[<(\d+);\d+;\d+[Mm]/.exec(data);
      if (m) {
        const b = Number(m[1]);
        if (b === 64) dispatch({ type: 'scroll', delta: 3 });
        if (b === 65) dispatch({ type: 'scroll', delta: -3 });
      }
    };
    internal_eventEmitter?.prependListener('input', onRaw);
    return () => {
      internal_eventEmitter?.removeListener('input', onRaw);
    };
  }, [internal_eventEmitter]);

  // Ink re-attaches the input handler in an effect, after the frame is drawn; a key that
  // lands in between would meet the previous render's state. The ref always holds the
  // handler of the newest render.
  const onKey = (input: string, key: Key) => {
    const raw = lastRaw.current;
    if (/\[<\d+;\d+;\d+[Mm]/.test(raw)) return; // a mouse report, handled above
    const quitKey = key.escape || (key.ctrl && input === 'c');
    // Esc first lets go of a selection; only Esc with nothing selected quits.
    if (key.escape && !confirmQuit && feed.selected !== null) return dispatch({ type: 'unselect' });
    if (confirmQuit) {
      setConfirmQuit(false);
      setStatus(null);
      if (quitKey) return quit();
    } else if (quitKey) {
      if (hasDraft(compose)) {
        setConfirmQuit(true);
        setStatus({ text: 'an unsent draft would be lost: press Esc or Ctrl-C again to quit, any other key to keep editing', level: 'error' });
        return;
      }
      return quit();
    }
    if (!key.tab) completion.current = null;
    if (key.return) {
      if (key.meta || key.shift) return cdispatch({ type: 'newline' });
      return submit();
    }
    if (raw === '\n') return cdispatch({ type: 'newline' });
    if (key.tab) {
      if (key.shift) return dispatch({ type: 'cycle', delta: -1 });
      if (compose.text.length === 0) return dispatch({ type: 'cycle', delta: 1 });
      const r = completeAt(compose.text, compose.cursor, sources, completion.current);
      if (!r) return;
      completion.current = r.completion;
      if (r.completion.candidates.length > 1) setStatus({ text: `Tab cycles: ${r.completion.candidates.join('  ')}`, level: 'info' });
      return cdispatch({ type: 'set', text: r.text, cursor: r.cursor });
    }
    if (key.pageUp) return dispatch({ type: 'scroll', delta: Math.max(1, feedHeight - 2), max: win.maxScroll });
    if (key.pageDown) return dispatch({ type: 'scroll', delta: -Math.max(1, feedHeight - 2) });
    // Alt-↑/↓ (tmux and xterm send ESC[1;3A, some terminals ESC ESC[A: Ink reports both as
    // meta) and Ctrl-↑/↓ (ESC[1;5A) move the selection; plain ↑/↓ stay history recall.
    if (key.upArrow) return key.ctrl || key.meta ? dispatch({ type: 'select', delta: -1 }) : cdispatch({ type: 'historyPrev' });
    if (key.downArrow) return key.ctrl || key.meta ? dispatch({ type: 'select', delta: 1 }) : cdispatch({ type: 'historyNext' });
    if (key.leftArrow) return key.ctrl || key.meta ? dispatch({ type: 'cycle', delta: -1 }) : cdispatch({ type: 'left' });
    if (key.rightArrow) return key.ctrl || key.meta ? dispatch({ type: 'cycle', delta: 1 }) : cdispatch({ type: 'right' });
    if (key.home || (key.ctrl && input === 'a')) return cdispatch({ type: 'home' });
    if (key.end || (key.ctrl && input === 'e')) {
      if (compose.text.length === 0 && feed.scroll > 0) return dispatch({ type: 'scroll', delta: -feed.scroll });
      return cdispatch({ type: 'end' });
    }
    if (key.backspace) return cdispatch({ type: 'backspace' });
    // Keys repeated faster than the terminal flushes arrive as one chunk of DELs.
    if (/^[\x7f\b]{2,}$/.test(raw)) {
      for (let i = 0; i < raw.length; i++) cdispatch({ type: 'backspace' });
      return;
    }
    // Ink reports both DEL (what Backspace sends) and the Delete key as `delete`; the raw
    // sequence tells them apart.
    if (key.delete) return cdispatch({ type: raw.includes('[3~') ? 'delete' : 'backspace' });
    if (key.meta && /^[1-9]$/.test(input)) {
      const t = tabsOf(feed)[Number(input) - 1];
      if (t) dispatch({ type: 'switch', tab: t });
      return;
    }
    if (key.ctrl || key.meta) return;
    if (input.length > 0) cdispatch({ type: 'insert', text: input });
  };
  const onKeyRef = useRef(onKey);
  onKeyRef.current = onKey;
  useInput(useCallback((input: string, key: Key) => onKeyRef.current(input, key), []));

  const others = peers.filter((p) => p.id !== me);
  const replyShown = replyTo ?? replyCommandTarget;
  const destText = replyShown
    ? `${isReplyCommand ? '/reply: ' : ''}reply to ${neutralize(lc.name(replyShown.fromId))} (${replyShown.id})`
    : isReplyCommand
      ? '/reply: nothing to reply to in this tab'
      : isCommand
    ? `command ${compose.text.trim().split(/\s+/)[0] ?? ''}`
    : route === null
      ? ''
      : route.ok
        ? `to ${describeDest(route.dest)}${warning ? ` — ${warning}` : ''}`
        : `✗ ${route.reason}`;
  const destBad = !replyTo && ((route !== null && !route.ok) || warning !== null);
  const rightStatus = feed.scroll > 0 ? `  ↑ ${feed.scroll} rows back · PgDn/End to follow` : '';
  const help =
    feed.selected !== null
      ? 'Enter replies to ▶ · Alt-↑/↓ move · Esc unselects · a draft starting @Name or #channel goes there instead'
      : 'Enter send · Alt-Enter newline · Tab complete · PgUp/PgDn scroll · Alt-↑ select · /help · Esc quit';
  const statusText = status ? status.text : busStatus ? busStatus : help;
  const statusColor = status?.level === 'error' || (!status && busStatus) ? accent(depth, 'red') : undefined;
  const shown = composeView.rows.slice(Math.max(0, Math.min(composeView.cursorRow - MAX_COMPOSE_ROWS + 1, composeView.rows.length - MAX_COMPOSE_ROWS)), undefined).slice(0, MAX_COMPOSE_ROWS);

  return (
    <Box flexDirection="column" width={width} height={rows - 1}>
      <TabBar feed={feed} depth={depth} width={width} />
      <Feed lines={win.lines} height={feedHeight} />
      <Box height={1} width={width} overflow="hidden">
        <Text wrap="truncate-end" {...(destBad && accent(depth, 'yellow') ? { color: 'yellow' } : accent(depth, 'green') ? { color: 'green' } : {})}>
          {`── ${destText} `}
          {'─'.repeat(Math.max(0, width - textWidth(destText) - 4))}
        </Text>
      </Box>
      <Box flexDirection="column" height={composeHeight}>
        {shown.map((r, i) => (
          <Text key={i} wrap="truncate-end">
            <Text dimColor>{i === 0 ? '> ' : '  '}</Text>
            {r.before}
            {r.at ? <Text inverse>{r.at}</Text> : null}
            {r.after}
          </Text>
        ))}
      </Box>
      <Box height={1} width={width} overflow="hidden">
        <Text wrap="truncate-end">
          <Text dimColor>live: </Text>
          {others.length === 0 ? <Text dimColor>nobody else</Text> : null}
          {others.map((p, i) => {
            const st = peerStatus(p);
            return (
              <Text key={p.id}>
                {i > 0 ? <Text dimColor> · </Text> : null}
                <Text {...(colorFor(p.id, depth) ? { color: colorFor(p.id, depth) as string } : {})}>{neutralize(p.name)}</Text>
                <Text dimColor>{` ${st.status}`}</Text>
                {/* Deaf: nothing delivers to it, so what is sent there piles up unread. */}
                {st.deaf ? <Text {...(accent(depth, 'yellow') ? { color: 'yellow' } : {})}>{' deaf'}</Text> : null}
              </Text>
            );
          })}
          <Text dimColor>{` · ${me} (you)${mouse ? ' · mouse on' : ''}`}</Text>
        </Text>
      </Box>
      <Box height={1} width={width} overflow="hidden">
        <Text wrap="truncate-end" {...(statusColor ? { color: statusColor } : {})}>
          {statusText}
          {rightStatus}
        </Text>
      </Box>
    </Box>
  );
}
