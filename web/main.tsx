// The page of `attend web` (issue 24 §1): a React view of what the server pushes over
// server-sent events, validated with the server's own schema (tools/web/schema.ts). Every
// text from the bus is put in the DOM as text (React escapes it; nothing here sets HTML).
// Bundled by scripts/postbuild.mjs into dist/web/app.js.

import { StrictMode, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { BOOT_ELEMENT, OwnerView, PageBoot, SendResponse, SessionResponse, ThreadResponse, type TreeNode, WebEvent, type WebMessage, type WebPeer } from '../tools/web/schema.js';

type View = { kind: 'all' } | { kind: 'open' } | { kind: 'direct' } | { kind: 'channel'; name: string } | { kind: 'owner' } | { kind: 'thread'; id: string };

interface Status {
  text: string;
  error: boolean;
}

/** A performance mark set when the first message list is on screen (scripts/bench/web.mjs reads it). */
const FIRST_PAINT_MARK = 'attend:first-messages';

/** `@name`s and one `#channel` at the start of a draft are its targets; the rest is the body. */
function parseDraft(text: string): { to: string[]; channel?: string; body: string } {
  const to: string[] = [];
  let channel: string | undefined;
  let rest = text.trimStart();
  for (;;) {
    const m = /^([@#])([^\s@#]+)\s*/.exec(rest);
    if (!m) break;
    if (m[1] === '@') to.push(m[2]!);
    else if (channel === undefined) channel = m[2]!;
    else break;
    rest = rest.slice(m[0].length);
  }
  return { to, ...(channel !== undefined && channel !== 'open' ? { channel } : {}), body: rest };
}

function hhmm(t: number): string {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

function Message({ m, onReply, onThread, selected }: { m: WebMessage; onReply?(m: WebMessage): void; onThread?(m: WebMessage): void; selected?: boolean }) {
  return (
    <article className="msg" tabIndex={0} data-id={m.id} aria-current={selected} onKeyDown={(e) => {
        if (e.target !== e.currentTarget) return;
        if (e.key === 'r' && onReply) (e.preventDefault(), onReply(m));
        if (e.key === 't' && onThread) (e.preventDefault(), onThread(m));
      }}>
      <div className="hdr">{m.header}</div>
      <div className="meta">
        <b>{m.fromName}</b> → {m.toLabel}{m.scope !== m.toLabel ? ` · ${m.scope}` : ''} · {hhmm(m.time)}
        {m.urgent ? ' · URGENT' : ''} <span className={`sig-${m.sig ?? 'none'}`}>sig={m.sig ?? 'none'}</span>{' '}
        {onReply ? (
          <button type="button" className="reply" onClick={() => onReply(m)} aria-label={`reply to ${m.fromName}`}>
            reply
          </button>
        ) : null}{' '}
        {onThread ? (
          <button type="button" className="thread" onClick={() => onThread(m)} aria-label="show the thread">
            thread
          </button>
        ) : null}
      </div>
      <div className="body">{m.body}</div>
    </article>
  );
}

function Roster({ peers }: { peers: WebPeer[] }) {
  const byHost = useMemo(() => {
    const g = new Map<string, WebPeer[]>();
    for (const p of peers) g.set(p.host, [...(g.get(p.host) ?? []), p]);
    return [...g.entries()];
  }, [peers]);
  return (
    <aside className="roster" aria-label="roster">
      {byHost.map(([host, ps]) => (
        <section key={host}>
          <div className="machine">{host}</div>
          {ps.map((p) => (
            <div key={p.id} className={`peer${p.gone ? ' gone' : ''}`} data-peer={p.id} data-status={p.status}>
              {p.name} ({p.kind}) — {p.status}; {p.reach}
            </div>
          ))}
        </section>
      ))}
    </aside>
  );
}

function Tree({ nodes }: { nodes: TreeNode[] }) {
  if (nodes.length === 0) return null;
  return (
    <ul className="tree">
      {nodes.map((n) => (
        <li key={n.id} data-node={n.id}>
          <span className={n.live ? '' : 'gone'}>{n.name}</span>
          {n.live ? '' : ' (not live)'}
          <Tree nodes={n.children} />
        </li>
      ))}
    </ul>
  );
}

async function post(path: string, csrf: string, body: unknown): Promise<{ ok: boolean; json: Record<string, unknown> }> {
  const r = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'csrf-token': csrf }, body: JSON.stringify(body) });
  return { ok: r.ok, json: (await r.json()) as Record<string, unknown> };
}

function Owner({ tick, csrf, say }: { tick: number; csrf: string | null; say(s: Status): void }) {
  const [view, setView] = useState<OwnerView | null>(null);
  const [again, setAgain] = useState(0);
  const [grant, setGrant] = useState({ verb: 'allow' as 'allow' | 'deny', from: '', to: '', both: false });
  useEffect(() => {
    let live = true;
    void fetch('/api/owner', { credentials: 'same-origin' })
      .then((r) => r.json())
      .then((j) => live && setView(OwnerView.parse(j)))
      .catch((e: unknown) => say({ text: `cannot read the owner's view: ${String(e)}`, error: true }));
    return () => {
      live = false;
    };
  }, [tick, again]);
  if (!view) return <div className="owner">loading…</div>;
  const change = async (path: string, body: unknown, done: string) => {
    if (!csrf) return;
    const r = await post(path, csrf, body);
    say(r.ok ? { text: done, error: false } : { text: `refused: ${String(r.json.error)}`, error: true });
    setAgain((n) => n + 1);
  };
  const p = view.policy;
  return (
    <div className="owner">
      <section aria-label="held messages">
        <h2>Held back ({view.held.length})</h2>
        {view.held.length === 0 ? <p>Nothing is held.</p> : null}
        {view.held.map((m) => (
          <div key={`${m.id}/${m.scope}`} className="held">
            <div className="reason">held: {m.reason}</div>
            <Message m={m} />
          </div>
        ))}
      </section>
      <section aria-label="sent messages">
        <h2>Sent, and who was shown it</h2>
        {view.sent.length === 0 ? <p>You have sent nothing on this bus.</p> : null}
        {view.sent.map((r) => (
          <div key={r.message.id} className="sent" data-id={r.message.id}>
            <Message m={r.message} />
            <div className="shown">
              shown to: {r.recipients.filter((x) => x.shown).map((x) => (x.by !== undefined ? `${x.name} (${x.by})` : x.name)).join(', ') || 'nobody yet'}
              {r.recipients.some((x) => !x.shown) ? `; not yet: ${r.recipients.filter((x) => !x.shown).map((x) => x.name).join(', ')}` : ''}
            </div>
          </div>
        ))}
      </section>
      <section aria-label="lineage">
        <h2>Lineage</h2>
        <Tree nodes={view.tree} />
      </section>
      <section aria-label="policy">
        <h2>Policy</h2>
        {view.policyError ? <p className="status error">{view.policyError}</p> : null}
        <form
          className="policy"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget);
            void change('/api/policy', { mode: String(f.get('mode')), open: String(f.get('open')) }, 'policy changed');
          }}
        >
          <label>
            mode{' '}
            <select name="mode" defaultValue={p.mode} key={`m${p.mode}`}>
              <option>groups</option>
              <option>family</option>
            </select>
          </label>{' '}
          <label>
            who posts to #open{' '}
            <select name="open" defaultValue={p.open} key={`o${p.open}`}>
              {['everyone', 'family', 'top', 'humans', 'granted'].map((o) => (
                <option key={o}>{o}</option>
              ))}
            </select>
          </label>{' '}
          max depth {p.maxDepth}
          {p.claims ? `, claims ${p.claims}` : ''} <button type="submit">change</button>
        </form>
        <ul className="grants">
          {p.allow.map((g, i) => (
            <li key={`a${i}`}>allow {g.from} → {g.to}{g.channel ? ` in #${g.channel}` : ''}</li>
          ))}
          {p.deny.map((g, i) => (
            <li key={`d${i}`}>deny {g.from} → {g.to}{g.channel ? ` in #${g.channel}` : ''}</li>
          ))}
        </ul>
        <form
          className="grant"
          onSubmit={(e) => {
            e.preventDefault();
            void change('/api/grant', { verb: grant.verb, from: grant.from, to: grant.to, ...(grant.both ? { both: true } : {}) }, `${grant.verb}: ${grant.from} → ${grant.to}`);
          }}
        >
          <select aria-label="allow or deny" value={grant.verb} onChange={(e) => setGrant({ ...grant, verb: e.target.value === 'deny' ? 'deny' : 'allow' })}>
            <option>allow</option>
            <option>deny</option>
          </select>
          <input aria-label="from" name="from" placeholder="from" value={grant.from} onChange={(e) => setGrant({ ...grant, from: e.target.value })} />
          <input aria-label="to" name="to" placeholder="to" value={grant.to} onChange={(e) => setGrant({ ...grant, to: e.target.value })} />
          <label>
            <input type="checkbox" checked={grant.both} onChange={(e) => setGrant({ ...grant, both: e.target.checked })} /> both ways
          </label>
          <button type="submit">apply</button>
        </form>
      </section>
    </div>
  );
}

function Thread({ id, tick, say }: { id: string; tick: number; say(s: Status): void }) {
  const [ms, setMs] = useState<WebMessage[] | null>(null);
  useEffect(() => {
    void fetch(`/api/thread?id=${encodeURIComponent(id)}`, { credentials: 'same-origin' })
      .then(async (r) => {
        const j: unknown = await r.json();
        if (!r.ok) return say({ text: `no thread: ${String((j as { error?: string }).error)}`, error: true });
        setMs(ThreadResponse.parse(j).messages);
      })
      .catch((e: unknown) => say({ text: String(e), error: true }));
  }, [id, tick]);
  return <div className="thread-view">{(ms ?? []).map((m) => <Message key={`${m.id}/${m.scope}`} m={m} />)}</div>;
}

/** What the page was served with (PageBoot), validated like every event; null when missing or bad. */
function readBoot(): PageBoot | null {
  const text = document.getElementById(BOOT_ELEMENT)?.textContent;
  if (!text) return null;
  try {
    const r = PageBoot.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** The state the first events give (the same reading as the stream's, below). */
function fromEvents(events: WebEvent[]) {
  const out = { messages: [] as WebMessage[], peers: [] as WebPeer[], channels: [] as string[], busStatus: null as string | null, me: '' };
  for (const ev of events) {
    if (ev.type === 'history') out.messages = ev.messages;
    else if (ev.type === 'roster') (out.peers = ev.peers), (out.channels = ev.channels);
    else if (ev.type === 'status') out.busStatus = ev.text;
    else if (ev.type === 'hello') out.me = ev.meName;
  }
  return out;
}

const BOOT = readBoot();
const FIRST = fromEvents(BOOT?.events ?? []);

function App() {
  const [messages, setMessages] = useState<WebMessage[]>(FIRST.messages);
  const [peers, setPeers] = useState<WebPeer[]>(FIRST.peers);
  const [channels, setChannels] = useState<string[]>(FIRST.channels);
  const [me, setMe] = useState<string>(BOOT?.session.meName ?? FIRST.me);
  const [csrf, setCsrf] = useState<string | null>(BOOT?.session.csrf ?? null);
  const [busStatus, setBusStatus] = useState<string | null>(FIRST.busStatus);
  const [status, setStatus] = useState<Status | null>(null);
  const [connected, setConnected] = useState(false);
  const [view, setView] = useState<View>({ kind: 'all' });
  const [draft, setDraft] = useState('');
  const [replyTo, setReplyTo] = useState<WebMessage | null>(null);
  const [tick, setTick] = useState(0);
  const feedRef = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    // Served with the page; asked for only when it was not (a page kept from before).
    if (!BOOT) {
      void fetch('/api/session', { credentials: 'same-origin' })
        .then((r) => r.json())
        .then((j) => {
          const s = SessionResponse.parse(j);
          setMe(s.meName);
          setCsrf(s.csrf);
        })
        .catch((e: unknown) => setStatus({ text: `cannot start: ${String(e)}`, error: true }));
    }
    const es = new EventSource('/api/events');
    es.onopen = () => setConnected(true);
    es.onerror = () => setConnected(false);
    es.onmessage = (e) => {
      const parsed = WebEvent.safeParse(JSON.parse(String(e.data)));
      if (!parsed.success) return setStatus({ text: 'an event did not match the schema; ignored', error: true });
      const ev = parsed.data;
      if (ev.type !== 'status' && ev.type !== 'hello') setTick((n) => n + 1);
      if (ev.type === 'history') setMessages(ev.messages);
      else if (ev.type === 'arrived') setMessages((ms) => {
        const have = new Set(ms.map((m) => `${m.id}/${m.scope}`));
        return [...ms, ...ev.messages.filter((m) => !have.has(`${m.id}/${m.scope}`))];
      });
      else if (ev.type === 'roster') {
        setPeers(ev.peers);
        setChannels(ev.channels);
      } else if (ev.type === 'status') setBusStatus(ev.text);
      else if (ev.type === 'hello') setMe(ev.meName);
    };
    return () => es.close();
  }, []);

  const shown = messages.filter((m) => view.kind === 'all' || (view.kind === 'channel' ? m.kind === 'channel' && m.channel === view.name : m.kind === view.kind));
  const say = (s: Status) => setStatus(s);
  useEffect(() => {
    const f = feedRef.current;
    if (f) f.scrollTop = f.scrollHeight;
    // The first message list on screen, for scripts/bench/web.mjs (ms since navigation start).
    if (shown.length > 0 && performance.getEntriesByName(FIRST_PAINT_MARK).length === 0) performance.mark(FIRST_PAINT_MARK);
  }, [shown.length]);

  async function submit(e: { preventDefault(): void }) {
    e.preventDefault();
    if (!csrf || draft.trim() === '') return;
    const d = parseDraft(draft);
    const channel = d.channel ?? (view.kind === 'channel' ? view.name : undefined);
    const body = replyTo ? { body: draft, re: replyTo.id } : { body: d.body, ...(d.to.length ? { to: d.to } : {}), ...(channel ? { channel } : {}) };
    const r = await fetch('/api/send', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'csrf-token': csrf }, body: JSON.stringify(body) });
    const j: unknown = await r.json();
    if (!r.ok) return setStatus({ text: `not sent: ${(j as { error?: string }).error ?? r.status}`, error: true });
    const ok = SendResponse.parse(j);
    setStatus({ text: `sent to ${ok.to} (${ok.id})${ok.notes.length ? ` — ${ok.notes.join('; ')}` : ''}`, error: false });
    setDraft('');
    setReplyTo(null);
  }

  const views: [string, View][] = [
    ['all', { kind: 'all' }],
    ['#open', { kind: 'open' }],
    ['direct', { kind: 'direct' }],
    ...channels.map((c): [string, View] => [`#${c}`, { kind: 'channel', name: c }]),
    ['owner', { kind: 'owner' }],
  ];
  const same = (a: View, b: View) => a.kind === b.kind && (a.kind !== 'channel' || (b.kind === 'channel' && a.name === b.name));
  const onReply = (x: WebMessage) => (setReplyTo(x), input.current?.focus());
  const onThread = (x: WebMessage) => setView({ kind: 'thread', id: x.id });
  return (
    <div className="app">
      <header>
        <strong>attend</strong> <span>{me}</span> <span aria-live="polite">{connected ? 'live' : 'offline'}</span>
        <nav aria-label="views">
          {views.map(([label, v]) => (
            <button key={label} type="button" aria-pressed={same(v, view)} onClick={() => setView(v)}>
              {label}
            </button>
          ))}
        </nav>
      </header>
      <div className="main">
        <div className="feed" ref={feedRef} role="log" aria-label="messages">
          {view.kind === 'owner' ? (
            <Owner tick={tick} csrf={csrf} say={say} />
          ) : view.kind === 'thread' ? (
            <Thread id={view.id} tick={tick} say={say} />
          ) : (
            shown.map((m) => <Message key={`${m.id}/${m.scope}`} m={m} selected={replyTo?.id === m.id} onReply={onReply} onThread={onThread} />)
          )}
        </div>
        <Roster peers={peers} />
      </div>
      {busStatus ? <div className="status error">{busStatus}</div> : null}
      {status ? <div className={`status${status.error ? ' error' : ''}`} role="status">{status.text}</div> : null}
      <form className="compose" onSubmit={(e) => void submit(e)}>
        {replyTo ? (
          <button type="button" onClick={() => setReplyTo(null)} title="cancel the reply">
            reply to {replyTo.fromName} ✕
          </button>
        ) : null}
        <textarea
          ref={input}
          name="draft"
          aria-label="message"
          rows={2}
          value={draft}
          placeholder="message #open; @name or #channel first to address (Enter sends, Shift+Enter a new line)"
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) void submit(e);
            if (e.key === 'Escape') setReplyTo(null);
          }}
        />
        <button type="submit" disabled={!csrf}>
          send
        </button>
      </form>
    </div>
  );
}

const el = document.getElementById('root');
if (el) createRoot(el).render(<StrictMode><App /></StrictMode>);
