// `ask` and `send --wait` (issue 23 §1): send, then wait until an addressee replies (a
// message whose `re` chain reaches the one sent, from one of the parties it was for) or has
// been shown it (its delivery ledger says so, as `attend inbox --sent` reads it). Waiting
// costs nothing while nothing arrives: the directories a reply can land in and the
// addressees' ledger directories are watched (tools/bus/store/wake.ts), and each change is
// one look through the follower (tools/bus/store/follower.ts), which reads only what is new.
// No timer runs but the timeout, and the follower's settle window when an index line is on
// its way. Every front end shares this: the CLI prints, MCP reports progress, chat marks.

import { basename, dirname } from 'node:path';
import type { VerbCtx } from './context.js';
import { AttendError, EXIT, usageError } from '../wire/errors.js';
import { type IndexState, type Message, SETTLE_MS, follow, readMessage, scopeOfDirName, wakeOnChange } from '../bus/store/index.js';
import { conduitShown, ledgerDir, receiveScopes, sessionLedgerDir, shownByOf } from '../bus/delivery/index.js';
import { readChannels } from '../bus/channels/index.js';
import { conduitOf, readPresence } from '../bus/presence/index.js';
import { createGate } from '../bus/trust/index.js';
import { scopeDir, scopeDirName } from '../bus/store/index.js';
import type { Scope } from '../wire/envelope.js';
import { isNamed, maySee } from '../wire/visibility.js';
import { neutralize } from '../wire/render.js';
import { type SendInput, type SendResult, runSend } from './send.js';

export type WaitMode = 'reply' | 'shown';

/** `--timeout` when none is given: long enough for a person at a terminal to answer. */
export const DEFAULT_WAIT_MS = 10 * 60_000;
const MAX_WAIT_MS = 24 * 3_600_000;

export interface Party {
  id: string;
  name: string;
  /** Shown: by which conduit, as far as the send could tell (sensor, deliverer, chat, its turn). */
  by?: string;
}

export interface WaitOutcome {
  mode: WaitMode;
  waitedMs: number;
  /** `reply`: the answer that ended the wait. */
  reply?: Message;
  shown: Party[];
  notShown: Party[];
}

export interface AskResult extends SendResult {
  wait: WaitOutcome;
}

export interface WaitHooks {
  /** The message is written (its id, who it reaches): said before the wait begins. */
  onSent?(sent: SendResult): void;
  /** Told when who has been shown it changes (the MCP front end turns this into progress). */
  onProgress?(p: { waitedMs: number; shown: Party[]; notShown: Party[] }): void;
  /** Stop waiting (a cancelled MCP request); rejects with the same timeout error. */
  signal?: AbortSignal;
}

/** `90s`, `5m`, `1h`, `500ms`: a wait's length. */
export function parseWaitDuration(text: string, flag = '--timeout'): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(text.trim());
  const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'] : NaN;
  if (!(ms > 0) || ms > MAX_WAIT_MS) throw usageError(`${flag} '${neutralize(text.slice(0, 20))}' is not a duration between 1ms and 24h (90s, 5m, 1h)`);
  return ms;
}

export function parseWaitMode(text: string): WaitMode {
  if (text === 'reply' || text === 'shown') return text;
  throw usageError(`--wait '${neutralize(text.slice(0, 20))}' is reply or shown`);
}

/** Send, then wait: `attend ask`, `attend send --wait`, the MCP `ask` tool. */
export async function runAsk(ctx: VerbCtx, input: SendInput & { wait: WaitMode; timeoutMs: number }, hooks: WaitHooks = {}): Promise<AskResult> {
  const sent = runSend(ctx, input);
  hooks.onSent?.(sent);
  const wait = await waitForAnswer(ctx, sent, { mode: input.wait, timeoutMs: input.timeoutMs }, hooks);
  return { ...sent, wait };
}

/** The scope a sent file sits in, from its path. */
function scopeOfFile(file: string): Scope | null {
  return scopeOfDirName(basename(dirname(file)));
}

/** Wait for what `opts.mode` asks of a message already sent. */
export function waitForAnswer(ctx: VerbCtx, sent: SendResult, opts: { mode: WaitMode; timeoutMs: number }, hooks: WaitHooks = {}): Promise<WaitOutcome> {
  const root = ctx.root();
  const me = ctx.identity();
  const started = ctx.now();
  const sentScopes = sent.files.map(scopeOfFile).filter((s): s is Scope => s !== null);
  const sentDirNames = [...new Set(sentScopes.map(scopeDirName))];
  // Where an answer can land: the asker's own receive set (a reply to a direct message comes
  // back to its tray) and wherever the question went (a channel, #open).
  const scopes = new Map<string, Scope>();
  for (const s of [...receiveScopes(root, me), ...sentScopes]) scopes.set(scopeDir(root, s), s);
  const parties: Party[] = sent.delivery.map((d) => ({ id: d.id, name: d.name, ...(d.reach.word === 'shown' && d.reach.by !== undefined ? { by: d.reach.by } : d.reach.word === 'next-turn' ? { by: 'its turn boundary' } : {}) }));
  const isAddressee = (id: string): boolean => {
    if (id === me.id) return false;
    if (sent.to === '*') return true;
    if (sent.to.startsWith('#')) return readChannels(root).channels[sent.to.slice(1)]?.members[id] !== undefined;
    return isNamed({ to: sent.to }, id);
  };
  const gate = createGate(root, me);
  const thread = new Set([sent.id]);
  const seen = new Set<string>();
  const states = new Map<string, IndexState | undefined>();
  const shownIds = new Set<string>();

  /** Does `m`'s `re` chain reach the question? Walks up through messages already on disk. */
  const inThread = (m: Message): boolean => {
    const chain: string[] = [];
    let re = m.re;
    for (let depth = 0; re !== undefined && depth < 32; depth++) {
      if (thread.has(re)) {
        for (const id of [m.id, ...chain]) thread.add(id);
        return true;
      }
      chain.push(re);
      let parent: Message | null = null;
      for (const s of scopes.values()) if ((parent = readMessage(root, s, re, ctx.reporter)) !== null) break;
      re = parent?.re;
    }
    return false;
  };

  const lookForReply = (): { reply?: Message; settleLater: boolean } => {
    let settleLater = false;
    for (const [dir, scope] of scopes) {
      const f = follow(dir, states.get(dir), { now: ctx.now(), floor: sent.id, reporter: ctx.reporter });
      if (f.via === 'index' && !f.settled) settleLater = true;
      if (f.state !== undefined) states.set(dir, f.state);
      for (const id of f.ids) {
        if (id <= sent.id || seen.has(`${dir}\0${id}`)) continue;
        seen.add(`${dir}\0${id}`);
        const m = readMessage(root, scope, id, ctx.reporter);
        if (!m || !maySee(m.scope, m, me.id) || gate.held(m) !== null) continue;
        if (inThread(m) && isAddressee(m.fromId)) return { reply: m, settleLater };
      }
    }
    return { settleLater };
  };

  const lookForShown = (): boolean => {
    let changed = false;
    for (const p of parties) {
      if (shownIds.has(p.id)) continue;
      // By the conduit its ledger recorded with the wake (Ledger.via), not what delivers now.
      const shownTo = shownByOf(root, p.id);
      const s = sentDirNames.map((dir) => shownTo(dir, sent.id)).find((x) => x.shown);
      if (s) {
        shownIds.add(p.id);
        const by = conduitShown(s, () => conduitOf(readPresence(root), p.id, ctx.now()));
        if (by !== undefined) p.by = by;
        changed = true;
      }
    }
    return changed;
  };
  const split = () => ({ shown: parties.filter((p) => shownIds.has(p.id)), notShown: parties.filter((p) => !shownIds.has(p.id)).map(({ id, name }) => ({ id, name })) });

  return new Promise<WaitOutcome>((resolve, reject) => {
    let done = false;
    let settle: NodeJS.Timeout | undefined;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(settle);
      wake.close();
      hooks.signal?.removeEventListener('abort', onAbort);
      f();
    };
    const look = () => {
      if (done) return;
      try {
        if (lookForShown()) hooks.onProgress?.({ waitedMs: ctx.now() - started, ...split() });
        if (opts.mode === 'shown' && shownIds.size > 0) return finish(() => resolve({ mode: 'shown', waitedMs: ctx.now() - started, ...split() }));
        if (opts.mode === 'reply') {
          const r = lookForReply();
          if (r.reply) {
            const reply = r.reply;
            return finish(() => resolve({ mode: 'reply', waitedMs: ctx.now() - started, reply, ...split() }));
          }
          // A line on its way into an index: the follower reads it once it has settled.
          if (r.settleLater && settle === undefined) settle = setTimeout(() => ((settle = undefined), look()), SETTLE_MS);
        }
      } catch (err) {
        finish(() => reject(err));
      }
    };
    const expire = () => finish(() => reject(timeoutError(sent, opts, split())));
    const onAbort = () => expire();
    // Watched before the first look, so nothing written in between is missed.
    const dirs = [...(opts.mode === 'reply' ? scopes.keys() : []), ledgerDir(root), ...parties.map((p) => sessionLedgerDir(root, p.id))];
    const wake = wakeOnChange(dirs, look);
    const timer = setTimeout(expire, opts.timeoutMs);
    hooks.signal?.addEventListener('abort', onAbort);
    if (hooks.signal?.aborted) return expire();
    look();
  });
}

/** The timeout, as data every front end words alike: who has and has not been shown it. */
function timeoutError(sent: SendResult, opts: { mode: WaitMode; timeoutMs: number }, s: { shown: Party[]; notShown: Party[] }): AttendError {
  const names = (ps: Party[]) => ps.map((p) => `${neutralize(p.name)}${p.by !== undefined ? ` (${p.by})` : ''}`).join(', ');
  const what = opts.mode === 'reply' ? 'no reply' : 'not shown to anyone it is for';
  const secs = opts.timeoutMs >= 1000 ? `${Math.round(opts.timeoutMs / 1000)}s` : `${opts.timeoutMs}ms`;
  const who = sent.delivery.length === 0 ? 'nobody else was live for it' : `shown to ${s.shown.length ? names(s.shown) : 'nobody yet'}${s.notShown.length ? `; not shown to ${names(s.notShown)}` : ''}`;
  return new AttendError(`${what} to ${sent.id} within ${secs}: ${who}`, EXIT.timeout, { text: `the message stays; attend inbox --thread ${sent.id} shows any later answer` });
}
