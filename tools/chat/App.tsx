// The chat screen. State lives in pure reducers (state/*.ts), where a draft goes in
// state/destination.ts, the keys in one table (keys.ts), the parts of the screen in
// components/. This file wires keys to actions, subscriptions to hooks, and state to rows.

import { Box, type Key, useApp, useInput } from 'ink';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { Peer } from '../bus/presence/index.js';
import type { Message } from '../bus/store/index.js';
import type { ChatActions, ChannelInfo } from './actions.js';
import type { BusSource } from './bus-source.js';
import { type ColorDepth, colorFor } from './colors.js';
import { ComposeBox } from './components/compose-box.js';
import { DestinationLine } from './components/destination-line.js';
import { Feed } from './components/feed.js';
import { RosterLine } from './components/roster-line.js';
import { StatusLine } from './components/status-line.js';
import { TabBar } from './components/tab-bar.js';
import { errorLine } from './hints.js';
import { useRawInput } from './hooks/use-raw-input.js';
import { useTerminalSize } from './hooks/use-terminal-size.js';
import { actionFor, decodeKey, type KeyAction, statusHelp } from './keys.js';
import { COMMANDS, runSlash } from './slash.js';
import { composeReducer, composeRows, emptyCompose, hasDraft } from './state/compose.js';
import { defaultDestination, destinationLine, planDraft, replyTarget } from './state/destination.js';
import { feedReducer, initialFeed, MEMORY_CAP, tabsOf, visibleItems } from './state/feed.js';
import { type LineContext, MAX_BODY_LINES, visibleWindow } from './state/lines.js';
import { type Completion, completeAt, describeDest, type PeerRef } from './state/routing.js';
import { neutralize } from '../wire/render.js';
import { nameLookup, partyLabel } from '../wire/display.js';

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
/**
 * The first frame shows the newest FIRST_PAGE messages; the rest of the initial history (up
 * to `initialLimit`) is read after it, FILL_CHUNK at a time with input handled in between (a
 * chunk holds the event loop ~5 ms), and goes to the feed in one update at the end: an update
 * re-renders the feed, and forty of them would each hold a keystroke back. So the first frame
 * costs the same on a bus of a thousand messages as on one of a hundred thousand (issue #12
 * §2), and typing stays responsive while the rest loads.
 */
const FIRST_PAGE = 500;
const FILL_CHUNK = 50;
const MAX_COMPOSE_ROWS = 5;

export function App(props: AppProps) {
  const { me, source, actions, depth, now } = props;
  const app = useApp();
  const { columns, rows } = useTerminalSize();
  const width = Math.max(20, columns);

  const initialLimit = props.initialLimit ?? MEMORY_CAP;
  const filled = useRef<{ taken: number; hasOlder: boolean }>({ taken: 0, hasOlder: false });
  const [feed, dispatch] = useReducer(feedReducer, null, () => {
    const first = source.loadInitial(Math.min(FIRST_PAGE, initialLimit));
    filled.current = { taken: Math.min(FIRST_PAGE, initialLimit), hasOlder: first.hasOlder };
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
    let timer: NodeJS.Timeout | null = null;
    const read: Message[] = [];
    const step = () => {
      const f = filled.current;
      if (f.hasOlder && f.taken < initialLimit) {
        const n = Math.min(FILL_CHUNK, initialLimit - f.taken);
        const older = source.loadOlder(n);
        filled.current = { taken: f.taken + n, hasOlder: older.hasOlder };
        read.push(...older.messages);
        timer = setTimeout(step, 0);
        return;
      }
      if (read.length > 0 || f.taken > FIRST_PAGE) dispatch({ type: 'older', messages: read.splice(0), hasOlder: f.hasOlder });
    };
    timer = setTimeout(step, 0);
    return () => {
      if (timer) clearTimeout(timer);
    };
  }, [source, initialLimit]);

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

  // Read with the roster: a session that ended shows by its last name, marked gone (issue #10).
  const known = useMemo(() => source.knownNames?.() ?? new Map<string, string>(), [peers, source]);
  // The one name rule (tools/wire/display.ts), for senders, addressees and the thread marker alike.
  const names = useMemo(() => nameLookup(peers, me, known), [peers, me, known]);
  const items = useMemo(() => visibleItems(feed), [feed.messages, feed.active, feed.notices, feed.clearedAt, feed.me]);
  const lc: LineContext = useMemo(
    () => ({
      width,
      me,
      tab: feed.active,
      maxBodyLines: maxBody,
      selected: feed.selected,
      name: names.name,
      colorOf: (id) => colorFor(id, depth),
      parentSender: (id) => {
        const p = feed.byId.get(id);
        return p ? partyLabel(p.fromId, names) : undefined;
      },
    }),
    [width, me, feed.active, names, depth, feed.byId, maxBody, feed.selected],
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
  const defaultDest = useMemo(() => defaultDestination(feed, peerRefs), [feed.active, feed.messages, peerRefs, me]);
  const reach = useMemo(
    () => ({ live: peerRefs, members: (c: string) => chanInfo.find((x) => x.name === c)?.members ?? [] }),
    [peerRefs, chanInfo],
  );
  // What Enter does with the draft; the destination line says the same.
  const plan = useMemo(() => planDraft({ text: compose.text, feed, sources, defaultDest, reach }), [compose.text, feed, sources, defaultDest, reach]);

  const quit = useCallback(() => app.exit(), [app]);

  const submit = () => {
    const text = compose.text;
    if (text.trim().length === 0) return;
    if (plan.kind === 'command' || plan.kind === 'replyCommand') {
      const out = runSlash(text, {
        actions,
        tabChannel: feed.active.startsWith('#') && feed.active !== '#open' ? feed.active.slice(1) : null,
        replyTarget: () => {
          const m = replyTarget(plan);
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
    if (plan.kind === 'reply') {
      const parent = plan.to;
      try {
        const r = actions.reply(parent.id, text);
        cdispatch({ type: 'submitted' });
        dispatch({ type: 'unselect' });
        setStatus({ text: `replied to ${neutralize(lc.name(parent.fromId))} (${r.id})${r.notes.length ? ` — ${r.notes.join('; ')}` : ''}`, level: 'info' });
      } catch (err) {
        setStatus({ text: `not sent: ${errorLine(err)}`, level: 'error' });
      }
      return;
    }
    const route = plan.route;
    if (!route.ok) return setStatus({ text: `not sent: ${route.reason}`, level: 'error' });
    if (route.body.trim().length === 0) return setStatus({ text: 'not sent: the message is empty', level: 'error' });
    if (plan.refusal) return setStatus({ text: `not sent: ${plan.refusal}`, level: 'error' });
    try {
      const r = actions.send(route.dest, route.body);
      cdispatch({ type: 'submitted' });
      // Who will not see it now, as the send verb found it at send time (the same words as the
      // CLI and MCP); the destination line showed the roster's preview before Enter. The id
      // last: on a narrow terminal the truncated end is the least needed part.
      setStatus({ text: `sent to ${describeDest(route.dest)}${r.notes.length ? ` — ${r.notes.join('; ')}` : ''} (${r.id})`, level: 'info' });
    } catch (err) {
      setStatus({ text: `not sent: ${errorLine(err)}`, level: 'error' });
      refreshRoster();
    }
  };

  // The wheel scrolls three rows a notch (--mouse); every key's raw bytes are kept for decodeKey.
  const lastRaw = useRawInput((delta) => dispatch({ type: 'scroll', delta }));

  const page = Math.max(1, feedHeight - 2);
  // One handler per action of the key table (keys.ts): a Record, so none can be missing.
  const handlers: Record<KeyAction, (chord: string) => void> = {
    send: () => submit(),
    newline: () => cdispatch({ type: 'newline' }),
    historyPrev: () => cdispatch({ type: 'historyPrev' }),
    historyNext: () => cdispatch({ type: 'historyNext' }),
    complete: () => {
      // On an empty draft Tab moves to the next tab; otherwise it completes the word.
      if (compose.text.length === 0) return dispatch({ type: 'cycle', delta: 1 });
      const r = completeAt(compose.text, compose.cursor, sources, completion.current);
      if (!r) return;
      completion.current = r.completion;
      if (r.completion.candidates.length > 1) setStatus({ text: `Tab cycles: ${r.completion.candidates.join('  ')}`, level: 'info' });
      cdispatch({ type: 'set', text: r.text, cursor: r.cursor });
    },
    tabPrev: () => dispatch({ type: 'cycle', delta: -1 }),
    tabNext: () => dispatch({ type: 'cycle', delta: 1 }),
    tabJump: (chord) => {
      const t = tabsOf(feed)[Number(chord.slice(-1)) - 1];
      if (t) dispatch({ type: 'switch', tab: t });
    },
    scrollBack: () => dispatch({ type: 'scroll', delta: page, max: win.maxScroll }),
    scrollForward: () => dispatch({ type: 'scroll', delta: -page }),
    selectOlder: () => dispatch({ type: 'select', delta: -1 }),
    selectNewer: () => dispatch({ type: 'select', delta: 1 }),
    left: () => cdispatch({ type: 'left' }),
    right: () => cdispatch({ type: 'right' }),
    home: () => cdispatch({ type: 'home' }),
    end: () => {
      // End on an empty draft while scrolled back follows the newest again.
      if (compose.text.length === 0 && feed.scroll > 0) return dispatch({ type: 'scroll', delta: -feed.scroll });
      cdispatch({ type: 'end' });
    },
    backspace: () => cdispatch({ type: 'backspace' }),
    delete: () => cdispatch({ type: 'delete' }),
    deleteWord: () => cdispatch({ type: 'deleteWord' }),
    killLine: () => cdispatch({ type: 'killLine' }),
    // Reached only with nothing to confirm (onKey handles quitting).
    quit: () => quit(),
  };

  // Ink re-attaches the input handler in an effect, after the frame is drawn; a key that
  // lands in between would meet the previous render's state. The ref always holds the
  // handler of the newest render.
  const onKey = (input: string, key: Key) => {
    const d = decodeKey(input, key, lastRaw.current);
    if (d === null) return; // a mouse report (handled above) or nothing
    const chord = 'chord' in d ? d.chord : null;
    const action = chord !== null ? actionFor(chord) : null;
    if (action === 'quit') {
      // Esc first lets go of a selection; only Esc with nothing selected quits.
      if (chord === 'Esc' && !confirmQuit && feed.selected !== null) return dispatch({ type: 'unselect' });
      if (confirmQuit || !hasDraft(compose)) return quit();
      setConfirmQuit(true);
      setStatus({ text: 'an unsent draft would be lost: press Esc or Ctrl-C again to quit, any other key to keep editing', level: 'error' });
      return;
    }
    if (confirmQuit) {
      // Any other key keeps editing, and is handled as usual.
      setConfirmQuit(false);
      setStatus(null);
    }
    if (action !== 'complete') completion.current = null;
    if ('text' in d) return cdispatch({ type: 'insert', text: d.text });
    if (action === null || chord === null) return;
    for (let i = 0; i < d.count; i++) handlers[action](chord);
  };
  const onKeyRef = useRef(onKey);
  onKeyRef.current = onKey;
  useInput(useCallback((input: string, key: Key) => onKeyRef.current(input, key), []));

  const dest = destinationLine(plan, lc.name);
  const help = statusHelp(feed.selected !== null);

  return (
    <Box flexDirection="column" width={width} height={rows - 1}>
      <TabBar feed={feed} depth={depth} width={width} />
      <Feed lines={win.lines} height={feedHeight} />
      <DestinationLine text={dest.text} bad={dest.bad} depth={depth} width={width} />
      <ComposeBox view={composeView} maxRows={MAX_COMPOSE_ROWS} />
      <RosterLine peers={peers} me={me} mouse={mouse} depth={depth} width={width} />
      <StatusLine status={status} busStatus={busStatus} help={help} scroll={feed.scroll} depth={depth} width={width} />
    </Box>
  );
}
