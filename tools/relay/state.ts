// What machines share besides messages (issue 13), in one JetStream KV bucket without a TTL
// (a machine that is away keeps its entries, so one that joins later still learns them):
//
//   <host>.channels          that machine's channel view (tools/relay/channel-sync.ts)
//   <host>.keys.<node b64>   the public key ids it published for its node: what the node's
//                            record in the trust directory vouches for (never the bus's list)
//
// A host's user may put only under its own name (tools/relay/hub-config.ts), so a machine
// vouches for its own members and keys and for nobody else's. Each relay puts its own entries
// when they change and applies the others' to this bus: channels into state/channels.json,
// keys into the trust directory's hosts/<host>/ (tools/bus/trust/remote-keys.ts), where readers
// verify remote messages. A session id is pinned to the first machine that published a key
// for it; another machine's key for it (or any machine's for a session of this machine) is
// refused loudly: logged, parked (`attend relay status`, `attend doctor`), never recorded.

import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { type KV, Kvm } from '@nats-io/kv';
import { type ChannelStore, dissolvedChannel, readChannels, updateChannels } from '../bus/channels/index.js';
import { anchorOf, chainPath, claimProblem, isLocalNode, publishedKeysDir, readRemoteKeys, recordRemoteKeys } from '../bus/trust/index.js';
import { DirWatch, scopeDir, stateDir } from '../bus/store/index.js';
import { isGlobalId } from '../wire/hosts.js';
import { parseChannelName } from '../wire/names.js';
import { applySnapshot, parseHostChannels, snapshotOf } from './channel-sync.js';
import { isMissingOnHub } from './nats-errors.js';
import { park } from './store.js';

export const STATE_BUCKET = 'attend-state';
/** The beat that covers a missed change of the channel store or the keys, while a directory is not watched… */
const BEAT_MS = 5_000;
/** …and while both are (inotify does not miss a rename: only a net). */
const BEAT_WATCHED_MS = 30_000;
/** How long "is this session this machine's" is kept (state.ts SharedState.local). */
const LOCAL_TTL_MS = 5_000;

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const unb64 = (s: string) => Buffer.from(s, 'base64url').toString('utf8');
const validChannel = (name: string) => {
  const p = parseChannelName(name);
  return p.ok && p.name === name;
};

/** The shared state bucket (made when missing). */
export function openStateBucket(nc: NatsConnection, replicas = 1): Promise<KV> {
  return new Kvm(nc).create(STATE_BUCKET, { history: 1, replicas });
}

/** What this machine puts for its node: the keys the node's record vouches for, one a line. */
function keyListText(keysDir: string, node: string): string {
  return anchorOf(keysDir, node)
    .keys.map((k) => `${k.keyId} ${k.created}\n`)
    .join('');
}

/** Put this machine's key lists for `nodes` (what `attend relay resync` needs before it publishes). */
export async function putKeyLists(kv: KV, host: string, keysDir: string, nodes: Iterable<string>): Promise<void> {
  for (const node of nodes) {
    const text = keyListText(keysDir, node);
    if (text !== '') await kv.put(`${host}.keys.${b64(node)}`, text);
  }
}

export class SharedState {
  private kv: KV | null = null;
  private stopped = false;
  private watchers: DirWatch[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastChannels = '';
  /** Per local node: the key list text last put. */
  private readonly putKeys = new Map<string, string>();
  /** Key ids known to be on the hub (put by us): the outbound publishes after them. */
  private readonly putIds = new Set<string>();
  private readonly keyStamps = new Map<string, string>();
  private readonly keysCache = new Map<string, ReturnType<typeof readRemoteKeys>>();
  /** Claims refused in this run, each told once (the watch hands every entry again after a reconnect). */
  private readonly refused = new Set<string>();
  private readonly localCache = new Map<string, { local: boolean; at: number }>();
  private channelsCache: { stamp: string; store: ChannelStore } | null = null;
  private pushing: Promise<void> | null = null;
  private again = false;
  private watching: { stop(): void } | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly host: string,
    private readonly root: string,
    /** This user's key directory: the records beside it, and the remote keys recorded there. */
    private readonly keysDir: string,
    /** Display names of this machine's live members. */
    private readonly names: () => Map<string, string>,
    private readonly log: (line: string) => void,
    /** Copies of the bucket the hub keeps (hub.ts replicasFor). */
    private readonly replicas: () => number = () => 1,
    /** The bucket's watch found it missing: check the hub now (hub.ts HubRepair.repair). */
    private readonly onMissing: () => void = () => {},
  ) {}

  /** The hub lost the bucket (hub.ts HubRepair): make it again, put everything again, watch afresh. */
  async lost(): Promise<void> {
    if (!this.kv || this.stopped) return;
    // At once, before any await: a message re-offered meanwhile must not count its signing
    // key as on the hub (ensureKey waits for the bucket to be made again, then puts it).
    this.forget();
    const recovering = (async () => {
      await this.recreate();
      await this.push();
    })();
    this.recovering = recovering;
    try {
      await recovering;
    } finally {
      if (this.recovering === recovering) this.recovering = null;
    }
    this.restart();
  }

  /** The bucket being made again after a loss (lost), or null. */
  private recovering: Promise<void> | null = null;

  /** Nothing put is known to be on the hub any more. */
  private forget(): void {
    this.lastChannels = '';
    this.putKeys.clear();
    this.putIds.clear();
    this.keyStamps.clear();
  }

  /** Resolves once the bucket is there and this machine's entries are put (or on stop). */
  async start(stop: () => boolean): Promise<void> {
    while (!this.kv && !stop() && !this.stopped) {
      try {
        this.kv = await openStateBucket(this.nc, this.replicas());
      } catch (err) {
        this.log(`attend relay: state bucket: ${(err as Error).message}`);
        await delay(1_000);
      }
    }
    if (!this.kv || this.stopped) return;
    await this.push();
    // Local changes: the channel store and published keys, each directory watched (or, while
    // it is missing, its parent for its making: DirWatch). A beat covers missed events: slow
    // while both are watched, BEAT_MS while one could not be.
    const onChange = () => void this.push();
    this.watchers = [
      new DirWatch(stateDir(this.root), (n) => (n === null || n === 'channels.json') && onChange()),
      new DirWatch(publishedKeysDir(this.root), (n) => (n === null || n.endsWith('.pub')) && onChange()),
    ];
    const beat = () => {
      for (const w of this.watchers) w.ensure();
      onChange();
      this.timer = setTimeout(beat, this.watchers.every((w) => w.watching) ? BEAT_WATCHED_MS : BEAT_MS);
      this.timer.unref();
    };
    this.timer = setTimeout(beat, BEAT_MS);
    this.timer.unref();
    void this.watchLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers) w.close();
  }

  /**
   * After a reconnect: a watch whose bucket went with the hub's store never hears again, so
   * it is started over (as Presence.restart); the new one gets every entry afresh, which
   * applying absorbs (channels change nothing unless they differ, keys are recorded once).
   */
  restart(): void {
    this.watching?.stop();
  }

  /** Put whatever of this machine's changed; one at a time, coalescing requests. */
  push(): Promise<void> {
    if (this.pushing) {
      this.again = true;
      return this.pushing;
    }
    this.pushing = (async () => {
      do {
        this.again = false;
        try {
          await this.putChannels();
          await this.putAllKeys();
        } catch (err) {
          // The hub is away: the next change or beat tries again. A hub that lost its store
          // has no bucket: make it again, and put everything again.
          if (isMissingOnHub(err)) await this.recreate();
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.pushing = null;
    });
    return this.pushing;
  }

  private async recreate(): Promise<void> {
    try {
      this.kv = await openStateBucket(this.nc, this.replicas());
      this.forget();
    } catch {
      // still away
    }
  }

  private async putChannels(): Promise<void> {
    if (!this.kv) return;
    const text = JSON.stringify(snapshotOf(readChannels(this.root), this.host, this.names()));
    if (text === this.lastChannels) return;
    await this.kv.put(`${this.host}.channels`, text);
    this.lastChannels = text;
  }

  private async putAllKeys(): Promise<void> {
    let names: string[];
    try {
      names = readdirSync(publishedKeysDir(this.root)).filter((n) => n.endsWith('.pub') && !n.startsWith('.'));
    } catch {
      return;
    }
    for (const n of names) {
      // Only a node whose list or record changed is read again: the beat runs every few
      // seconds. The bus's list only says which nodes there are; what is put comes from the
      // node's record (a key appended to the list by hand is never put).
      const node = n.slice(0, -'.pub'.length);
      let stamp = '';
      try {
        const st = statSync(join(publishedKeysDir(this.root), n));
        const rec = statSync(chainPath(this.keysDir, node), { throwIfNoEntry: false });
        stamp = `${st.mtimeMs}:${st.size}:${rec ? `${rec.mtimeMs}:${rec.size}` : '-'}`;
      } catch {
        continue;
      }
      if (this.keyStamps.get(n) === stamp) continue;
      await this.putKey(node);
      this.keyStamps.set(n, stamp);
    }
  }

  private async putKey(node: string): Promise<void> {
    if (!this.kv) throw new Error('the state bucket is not open yet');
    const text = keyListText(this.keysDir, node);
    if (text === '') return;
    if (this.putKeys.get(node) === text) return;
    await this.kv.put(`${this.host}.keys.${b64(node)}`, text);
    this.putKeys.set(node, text);
    for (const line of text.split('\n')) if (line) this.putIds.add(line.split(' ')[0]!);
  }

  /**
   * Before a message signed by `keyId` of `node` is published: the key is on the hub first,
   * so a receiver that does not know it yet finds it there. Throws while the hub is away.
   */
  async ensureKey(node: string, keyId: string): Promise<void> {
    if (this.recovering) await this.recovering.catch(() => {});
    if (this.putIds.has(keyId)) return;
    await this.putKey(node);
  }

  /**
   * What `origin` published for `node`, as recorded here. Cached: this relay is the one
   * writer of the trust directory's hosts/ (it drops an entry whenever it records one), and
   * every import asks, so a burst does not read (or fail to read) the same file thousands of times.
   */
  private remoteKeys(origin: string, node: string) {
    const k = `${origin}\n${node}`;
    let v = this.keysCache.get(k);
    if (!v) {
      if (this.keysCache.size > 10_000) this.keysCache.clear();
      v = readRemoteKeys(this.keysDir, origin, node);
      this.keysCache.set(k, v);
    }
    return v;
  }

  /**
   * Is `node` this machine's: a record or key here, a lineage entry, or live here now? Asked
   * for every imported message of a session, so the answer is kept a few seconds (the live
   * roster is a listing of session records).
   */
  private local(node: string): boolean {
    const now = Date.now();
    const hit = this.localCache.get(node);
    if (hit && now - hit.at < LOCAL_TTL_MS) return hit.local;
    if (this.localCache.size > 10_000) this.localCache.clear();
    const local = isLocalNode(this.root, this.keysDir, node) || this.names().has(node);
    this.localCache.set(node, { local, at: now });
    return local;
  }

  private record(origin: string, node: string, text: string, key: string): void {
    this.keysCache.delete(`${origin}\n${node}`);
    const r = recordRemoteKeys({ keysDir: this.keysDir, host: origin, node, text, now: Date.now(), local: (n) => this.local(n) });
    if ('refused' in r) this.refuse(origin, node, key, r.refused);
  }

  /** Loudly: a line in the relay's log and a parked record (`attend relay status`, `attend doctor`), once a run. */
  private refuse(origin: string, node: string, key: string, reason: string): void {
    const k = `${origin}\n${node}`;
    if (this.refused.has(k)) return;
    this.refused.add(k);
    this.log(`attend relay: refused ${origin}'s key for ${node}: ${reason}`);
    try {
      park(this.root, { at: Date.now(), kind: 'reject', reason: `key refused: ${origin} published a key for ${node}: ${reason}`, subject: `${STATE_BUCKET} ${key}`, origin });
    } catch {
      // the log line is said; a bus that cannot take the record is reported elsewhere
    }
  }

  /** Why a message of `origin`'s node `node` cannot be taken as that machine's (a session id claimed twice), or null. */
  claim(origin: string, node: string): string | null {
    if (!isGlobalId(node)) return null;
    return claimProblem(this.keysDir, origin, node, (n) => this.local(n));
  }

  /** Is `keyId` one that `origin` published for `node`, as recorded here? */
  keyKnown(origin: string, node: string, keyId: string): boolean {
    return this.remoteKeys(origin, node).some((k) => k.keyId === keyId);
  }

  /** Does `origin`'s node have a key created at or before `t`? */
  nodeSigns(origin: string, node: string, t: number): boolean {
    const first = this.remoteKeys(origin, node)[0];
    return first !== undefined && first.created <= t;
  }

  /**
   * Ask the hub for what `origin` published for `node` (a message came before the watch did).
   * For a session id every machine's entry for it is read, oldest revision first, so the pin
   * goes to the machine that published first, as the watch would have applied them.
   */
  async fetchKeys(origin: string, node: string): Promise<void> {
    if (!this.kv) return;
    try {
      const names: string[] = [];
      if (isGlobalId(node)) for await (const k of await this.kv.keys(`*.keys.${b64(node)}`)) names.push(k);
      else names.push(`${origin}.keys.${b64(node)}`);
      const entries = [];
      for (const name of names) {
        const e = await this.kv.get(name);
        if (e && e.operation === 'PUT') entries.push(e);
      }
      entries.sort((a, b) => a.revision - b.revision);
      for (const e of entries) {
        const host = e.key.slice(0, e.key.indexOf('.'));
        if (host !== this.host) this.record(host, node, new TextDecoder().decode(e.value), e.key);
      }
    } catch {
      // not there, or the hub is away: the message is judged without it
    }
  }

  /** The channel store, re-read only when its file changed (asked once per channel import). */
  dissolved(name: string): { at: number; by: string } | null {
    let stamp = '-';
    try {
      const st = statSync(join(stateDir(this.root), 'channels.json'));
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      // none yet
    }
    if (!this.channelsCache || this.channelsCache.stamp !== stamp) this.channelsCache = { stamp, store: readChannels(this.root) };
    return dissolvedChannel(this.channelsCache.store, name);
  }

  private async watchLoop(): Promise<void> {
    while (!this.stopped && this.kv) {
      try {
        const w = await this.kv.watch();
        this.watching = w;
        for await (const e of w) {
          if (this.stopped) break;
          if (e.operation !== 'PUT') continue;
          const dot = e.key.indexOf('.');
          if (dot <= 0) continue;
          const host = e.key.slice(0, dot);
          if (host === this.host) continue;
          const rest = e.key.slice(dot + 1);
          const text = new TextDecoder().decode(e.value);
          try {
            if (rest === 'channels') this.applyChannels(host, text);
            else if (rest.startsWith('keys.')) this.record(host, unb64(rest.slice('keys.'.length)), text, e.key);
          } catch (err) {
            this.log(`attend relay: applying ${e.key}: ${(err as Error).message}`);
          }
        }
        this.watching = null;
        await delay(500);
      } catch (err) {
        // The bucket is gone under a live connection (the hub lost it): the check that makes
        // it again, and puts this machine's entries again (lost), is asked for now.
        if (isMissingOnHub(err)) this.onMissing();
        await delay(1_000);
      }
    }
  }

  private applyChannels(from: string, text: string): void {
    const snap = parseHostChannels(text, from);
    if (!snap) {
      this.log(`attend relay: ${from}'s channel state does not parse; ignored`);
      return;
    }
    // A dry run first: the store is rewritten (which wakes every sensor) only for a change.
    if (!applySnapshot(structuredClone(readChannels(this.root)), snap, from, this.host, validChannel).changed) return;
    const r = updateChannels(this.root, (store) => applySnapshot(store, snap, from, this.host, validChannel));
    // Dissolving removes the channel's history here as it did there.
    for (const name of r.dissolved) rmSync(scopeDir(this.root, { kind: 'channel', name }), { recursive: true, force: true });
    if (r.dissolved.length > 0) this.log(`attend relay: ${from} dissolved ${r.dissolved.map((n) => `#${n}`).join(', ')}`);
    // What we merged (a kick, a tombstone, a description) is ours to pass on too.
    void this.push();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
