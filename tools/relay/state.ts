// What machines share besides messages (issue 13), in one JetStream KV bucket without a TTL
// (a machine that is away keeps its entries, so one that joins later still learns them):
//
//   <host>.channels          that machine's channel view (tools/relay/channel-sync.ts)
//   <host>.keys.<node b64>   the public key ids it published for its node (keys/<node>.pub)
//
// A host's user may put only under its own name (tools/relay/hub-config.ts), so a machine
// vouches for its own members and keys and for nobody else's. Each relay puts its own entries
// when they change and applies the others' to this bus: channels into state/channels.json,
// keys into keys/@<host>/ (tools/bus/trust/remote-keys.ts), where readers verify remote messages.

import { readdirSync, rmSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { type KV, Kvm } from '@nats-io/kv';
import { type ChannelStore, dissolvedChannel, readChannels, updateChannels } from '../bus/channels/index.js';
import { publishedKeysDir, readPublishedKeys } from '../bus/trust/index.js';
import { scopeDir, stateDir } from '../bus/store/index.js';
import { readRemoteKeys, recordRemoteKeys } from '../bus/trust/index.js';
import { parseChannelName } from '../wire/names.js';
import { applySnapshot, parseHostChannels, snapshotOf } from './channel-sync.js';
import { isMissingOnHub } from './nats-errors.js';

export const STATE_BUCKET = 'attend-state';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const unb64 = (s: string) => Buffer.from(s, 'base64url').toString('utf8');
const validChannel = (name: string) => {
  const p = parseChannelName(name);
  return p.ok && p.name === name;
};

/** The shared state bucket (made when missing). */
export function openStateBucket(nc: NatsConnection): Promise<KV> {
  return new Kvm(nc).create(STATE_BUCKET, { history: 1 });
}

/** Put this machine's key lists for `nodes` (what `attend relay resync` needs before it publishes). */
export async function putKeyLists(kv: KV, host: string, root: string, nodes: Iterable<string>): Promise<void> {
  for (const node of nodes) {
    const keys = readPublishedKeys(root, node);
    if (keys.length > 0) await kv.put(`${host}.keys.${b64(node)}`, keys.map((k) => `${k.keyId} ${k.created}\n`).join(''));
  }
}

export class SharedState {
  private kv: KV | null = null;
  private stopped = false;
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastChannels = '';
  /** Per local node: the key list text last put. */
  private readonly putKeys = new Map<string, string>();
  /** Key ids known to be on the hub (put by us): the outbound publishes after them. */
  private readonly putIds = new Set<string>();
  private readonly keyStamps = new Map<string, string>();
  private readonly keysCache = new Map<string, ReturnType<typeof readRemoteKeys>>();
  private channelsCache: { stamp: string; store: ChannelStore } | null = null;
  private pushing: Promise<void> | null = null;
  private again = false;
  private watching: { stop(): void } | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly host: string,
    private readonly root: string,
    /** Display names of this machine's live members. */
    private readonly names: () => Map<string, string>,
    private readonly log: (line: string) => void,
  ) {}

  /** Resolves once the bucket is there and this machine's entries are put (or on stop). */
  async start(stop: () => boolean): Promise<void> {
    while (!this.kv && !stop() && !this.stopped) {
      try {
        this.kv = await openStateBucket(this.nc);
      } catch (err) {
        this.log(`attend relay: state bucket: ${(err as Error).message}`);
        await delay(1_000);
      }
    }
    if (!this.kv || this.stopped) return;
    await this.push();
    // Local changes: the channel store and published keys. A slow beat covers missed events.
    const onChange = () => void this.push();
    for (const dir of [stateDir(this.root), publishedKeysDir(this.root)]) {
      try {
        const w = watch(dir, { persistent: false }, (_e, name) => {
          const n = String(name ?? '');
          if (n === 'channels.json' || n.endsWith('.pub')) onChange();
        });
        w.on('error', () => w.close());
        this.watchers.push(w);
      } catch {
        // not there yet: the beat finds it
      }
    }
    this.timer = setInterval(onChange, 5_000);
    this.timer.unref();
    void this.watchLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
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
      this.kv = await openStateBucket(this.nc);
      this.lastChannels = '';
      this.putKeys.clear();
      this.putIds.clear();
      this.keyStamps.clear();
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
      // Only a list that changed is read again: the beat runs every few seconds.
      let stamp = '';
      try {
        const st = statSync(join(publishedKeysDir(this.root), n));
        stamp = `${st.mtimeMs}:${st.size}`;
      } catch {
        continue;
      }
      if (this.keyStamps.get(n) === stamp) continue;
      await this.putKey(n.slice(0, -'.pub'.length));
      this.keyStamps.set(n, stamp);
    }
  }

  private async putKey(node: string): Promise<void> {
    if (!this.kv) throw new Error('the state bucket is not open yet');
    const keys = readPublishedKeys(this.root, node);
    if (keys.length === 0) return;
    const text = keys.map((k) => `${k.keyId} ${k.created}\n`).join('');
    if (this.putKeys.get(node) === text) return;
    await this.kv.put(`${this.host}.keys.${b64(node)}`, text);
    this.putKeys.set(node, text);
    for (const k of keys) this.putIds.add(k.keyId);
  }

  /**
   * Before a message signed by `keyId` of `node` is published: the key is on the hub first,
   * so a receiver that does not know it yet finds it there. Throws while the hub is away.
   */
  async ensureKey(node: string, keyId: string): Promise<void> {
    if (this.putIds.has(keyId)) return;
    await this.putKey(node);
  }

  /**
   * What `origin` published for `node`, as recorded here. Cached: this relay is the one
   * writer of keys/@<host>/ (it drops an entry whenever it records one), and every import
   * asks, so a burst does not read (or fail to read) the same file thousands of times.
   */
  private remoteKeys(origin: string, node: string) {
    const k = `${origin}\n${node}`;
    let v = this.keysCache.get(k);
    if (!v) {
      if (this.keysCache.size > 10_000) this.keysCache.clear();
      v = readRemoteKeys(this.root, origin, node);
      this.keysCache.set(k, v);
    }
    return v;
  }

  private record(origin: string, node: string, text: string): void {
    this.keysCache.delete(`${origin}\n${node}`);
    recordRemoteKeys(this.root, origin, node, text);
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

  /** Ask the hub for what `origin` published for `node` (a message came before the watch did). */
  async fetchKeys(origin: string, node: string): Promise<void> {
    if (!this.kv) return;
    try {
      const e = await this.kv.get(`${origin}.keys.${b64(node)}`);
      if (e && e.operation === 'PUT') this.record(origin, node, new TextDecoder().decode(e.value));
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
            else if (rest.startsWith('keys.')) this.record(host, unb64(rest.slice('keys.'.length)), text);
          } catch (err) {
            this.log(`attend relay: applying ${e.key}: ${(err as Error).message}`);
          }
        }
        this.watching = null;
        await delay(500);
      } catch {
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
