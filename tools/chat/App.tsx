// The chat screen. State lives in pure reducers (state/*.ts), where a draft goes in
// state/destination.ts, what Enter does in submit.ts, the keys in one table (keys.ts), each
// subscription in a hook (hooks/), the parts of the screen in components/. This file lays
// out the screen and dispatches keys.

import { Box, type Key, useApp, useInput } from 'ink';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { ChatActions } from './actions.js';
import type { BusSource } from './bus-source.js';
import type { ColorDepth } from './colors.js';
import { ComposeBox } from './components/compose-box.js';
import { DestinationLine } from './components/destination-line.js';
import { Feed } from './components/feed.js';
import { RosterLine } from './components/roster-line.js';
import { StatusLine } from './components/status-line.js';
import { TabBar } from './components/tab-bar.js';
import { useBusMessages } from './hooks/use-bus-messages.js';
import { useDraftPlan } from './hooks/use-draft-plan.js';
import { useFeedView } from './hooks/use-feed-view.js';
import { useHistory, useScrollBack } from './hooks/use-history.js';
import { usePeers } from './hooks/use-peers.js';
import { useRawInput } from './hooks/use-raw-input.js';
import { useTerminalSize } from './hooks/use-terminal-size.js';
import { actionFor, decodeKey, type KeyAction, statusHelp } from './keys.js';
import { type ComposeAction, composeReducer, composeRows, emptyCompose, hasDraft } from './state/compose.js';
import { destinationLine } from './state/destination.js';
import { tabsOf } from './state/feed.js';
import { MAX_BODY_LINES } from './state/lines.js';
import { type Completion, completeAt } from './state/routing.js';
import { type Status, submitDraft } from './submit.js';
import { errorLine } from './hints.js';
import { neutralize } from '../wire/render.js';

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

const MAX_COMPOSE_ROWS = 5;
const EDIT_KEYS = ['newline', 'historyPrev', 'historyNext', 'left', 'right', 'home', 'backspace', 'delete', 'deleteWord', 'killLine'] as const satisfies readonly (KeyAction & ComposeAction['type'])[];

export function App(props: AppProps) {
  const { me, source, actions, depth, now } = props;
  const app = useApp();
  const { columns, rows } = useTerminalSize();
  const width = Math.max(20, columns);

  // Both the source and the roster report trouble here; the newest word wins.
  const [busStatus, setBusStatus] = useState<string | null>(null);
  const roster = usePeers(actions, { rosterMs: props.rosterMs, failed: setBusStatus });
  const { peers, channels: chanInfo } = roster;
  const [feed, dispatch] = useHistory(source, { me, width, channels: roster.channelNames.current, initialLimit: props.initialLimit });
  useBusMessages(source, dispatch, roster, setBusStatus);
  const [compose, cdispatch] = useReducer(composeReducer, undefined, () => emptyCompose());
  const [status, setStatus] = useState<Status | null>(null);
  const [confirmQuit, setConfirmQuit] = useState(false);
  const [mouse, setMouseState] = useState(props.mouse);
  const completion = useRef<Completion | null>(null);

  // Layout: tab bar, feed, destination, compose, roster, status. One row is left free at the
  // bottom: a frame as tall as the terminal makes Ink clear the screen on every render.
  const composeView = useMemo(() => composeRows(compose.text, compose.cursor, width - 2), [compose.text, compose.cursor, width]);
  const composeHeight = Math.min(MAX_COMPOSE_ROWS, composeView.rows.length);
  const feedHeight = Math.max(3, rows - 1 - 1 - 1 - composeHeight - 1 - 1);

  const maxBody = Math.min(MAX_BODY_LINES, Math.max(2, feedHeight - 1));
  useEffect(() => {
    dispatch({ type: 'resize', width, maxBody, height: feedHeight });
  }, [width, maxBody, feedHeight]);

  const { lc, win } = useFeedView({ feed, peers, source, me, width, height: feedHeight, maxBody, depth });
  useScrollBack(source, win.atTop, feed, dispatch);

  // What Enter does with the draft; the destination line says the same.
  const { plan, sources } = useDraftPlan(compose.text, feed, peers, chanInfo, actions, now);

  const quit = useCallback(() => app.exit(), [app]);

  const setMouse = (on: boolean) => {
    props.setMouse(on);
    setMouseState(on);
  };
  // `/ask`s whose reply has not come: on the status line until each settles (issue 23 §1).
  const [pending, setPending] = useState<{ id: string; name: string }[]>([]);
  // A wait holds directory watches: they end with the chat, answered or not.
  const stopWaits = useRef(new AbortController());
  useEffect(() => () => stopWaits.current.abort(), []);
  const asked = (a: { id: string; name: string; answer: Promise<unknown> }) => {
    setPending((p) => [...p, { id: a.id, name: a.name }]);
    const settle = (s: Status) => {
      setPending((p) => p.filter((x) => x.id !== a.id));
      setStatus(s);
    };
    a.answer.then(() => settle({ text: `${neutralize(a.name)} answered (${a.id})`, level: 'info' }), (err: unknown) => settle({ text: errorLine(err), level: 'error' }));
  };
  const submit = () =>
    submitDraft({ text: compose.text, plan, feed, actions, name: lc.name, now, mouse, dispatch, cdispatch, setStatus, setMouse, refreshRoster: roster.refresh, asked, waits: stopWaits.current.signal, quit });

  // The wheel scrolls three rows a notch (--mouse); every key's raw bytes are kept for decodeKey.
  const lastRaw = useRawInput((delta) => dispatch({ type: 'scroll', delta }));

  const page = Math.max(1, feedHeight - 2);
  // One handler per action of the key table (keys.ts): a Record, so none can be missing.
  const handlers: Record<KeyAction, (chord: string) => void> = {
    // The keys that only edit the draft are the compose reducer's actions of the same name.
    ...(Object.fromEntries(EDIT_KEYS.map((k) => [k, () => cdispatch({ type: k })])) as Record<(typeof EDIT_KEYS)[number], () => void>),
    send: () => submit(),
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
    end: () => {
      // End on an empty draft while scrolled back follows the newest again.
      if (compose.text.length === 0 && feed.scroll > 0) return dispatch({ type: 'scroll', delta: -feed.scroll });
      cdispatch({ type: 'end' });
    },
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

  const dest = destinationLine(plan, lc.name, feed.me);
  const help = statusHelp(feed.selected !== null);

  return (
    <Box flexDirection="column" width={width} height={rows - 1}>
      <TabBar feed={feed} depth={depth} width={width} />
      <Feed lines={win.lines} height={feedHeight} />
      <DestinationLine text={dest.text} bad={dest.bad} depth={depth} width={width} />
      <ComposeBox view={composeView} maxRows={MAX_COMPOSE_ROWS} />
      <RosterLine peers={peers} me={me} mouse={mouse} depth={depth} width={width} />
      <StatusLine status={status} busStatus={busStatus} help={help} scroll={feed.scroll} pending={pending.map((p) => p.name)} depth={depth} width={width} />
    </Box>
  );
}
