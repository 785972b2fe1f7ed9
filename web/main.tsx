// The page of `attend web` (issue 24 §1): a React view of what the server pushes over
// server-sent events, validated with the server's own schema (tools/web/schema.ts). Every
// text from the bus is put in the DOM as text (React escapes it; nothing here sets HTML).
// Bundled by scripts/postbuild.mjs into dist/web/app.js.

import { StrictMode, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { SendResponse, SessionResponse, WebEvent, type WebMessage, type WebPeer } from '../tools/web/schema.js';

type View = { kind: 'all' } | { kind: 'open' } | { kind: 'direct' } | { kind: 'channel'; name: string };

interface Status {
  text: string;
  error: boolean;
}

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

function Message({ m, onReply, selected }: { m: WebMessage; onReply(m: WebMessage): void; selected: boolean }) {
  return (
    <article className="msg" tabIndex={0} data-id={m.id} aria-current={selected} onKeyDown={(e) => e.key === 'r' && (e.preventDefault(), onReply(m))}>
      <div className="hdr">{m.header}</div>
      <div className="meta">
        <b>{m.fromName}</b> → {m.toLabel} · {m.scope} · {hhmm(m.time)}
        {m.urgent ? ' · URGENT' : ''} <span className={`sig-${m.sig ?? 'none'}`}>sig={m.sig ?? 'none'}</span>{' '}
        <button type="button" onClick={() => onReply(m)} aria-label={`reply to ${m.fromName}`}>
          reply
        </button>
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

function App() {
  const [messages, setMessages] = useState<WebMessage[]>([]);
  const [peers, setPeers] = useState<WebPeer[]>([]);
  const [channels, setChannels] = useState<string[]>([]);
  const [me, setMe] = useState<string>('');
  const [csrf, setCsrf] = useState<string | null>(null);
  const [busStatus, setBusStatus] = useState<string | null>(null);
  const [status, setStatus] = useState<Status | null>(null);
  const [connected, setConnected] = useState(false);
  const [view, setView] = useState<View>({ kind: 'all' });
  const [draft, setDraft] = useState('');
  const [replyTo, setReplyTo] = useState<WebMessage | null>(null);
  const feedRef = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    void fetch('/api/session', { credentials: 'same-origin' })
      .then((r) => r.json())
      .then((j) => {
        const s = SessionResponse.parse(j);
        setMe(s.meName);
        setCsrf(s.csrf);
      })
      .catch((e: unknown) => setStatus({ text: `cannot start: ${String(e)}`, error: true }));
    const es = new EventSource('/api/events');
    es.onopen = () => setConnected(true);
    es.onerror = () => setConnected(false);
    es.onmessage = (e) => {
      const parsed = WebEvent.safeParse(JSON.parse(String(e.data)));
      if (!parsed.success) return setStatus({ text: 'an event did not match the schema; ignored', error: true });
      const ev = parsed.data;
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
  useEffect(() => {
    const f = feedRef.current;
    if (f) f.scrollTop = f.scrollHeight;
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
  ];
  const same = (a: View, b: View) => a.kind === b.kind && (a.kind !== 'channel' || (b.kind === 'channel' && a.name === b.name));
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
          {shown.map((m) => (
            <Message key={`${m.id}/${m.scope}`} m={m} selected={replyTo?.id === m.id} onReply={(x) => (setReplyTo(x), input.current?.focus())} />
          ))}
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
