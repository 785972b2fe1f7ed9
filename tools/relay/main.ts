// The relay's verbs, called from the CLI (tools/cli/register-relay.ts loads this lazily):
// run, config, status, resync, hub-config. They return data; the CLI prints.

import { hostname } from 'node:os';
import { usageError } from '../wire/errors.js';
import type { RemoteMember } from '../bus/presence/index.js';
import { type Peer, reachOf } from '../bus/presence/index.js';
import { ensureRoot } from '../bus/store/index.js';
import { type RelaySettings, checkSettings, configFile, readConfig, sanitizeHost, writeConfig } from './config.js';
import { ImportedSet, listParked, readStatus, type Parked, type RelayStatus } from './store.js';

interface RelayFlags {
  server?: string | undefined;
  host?: string | undefined;
  creds?: string | undefined;
  tlsCa?: string | undefined;
  insecure?: boolean | undefined;
}

/** Flags over the config file over defaults. */
function settingsFrom(root: string, flags: RelayFlags): Partial<RelaySettings> {
  const file = readConfig(root) ?? {};
  const merged: Partial<RelaySettings> = { ...file };
  for (const k of ['server', 'host', 'creds', 'tlsCa'] as const) if (flags[k] !== undefined) merged[k] = flags[k];
  if (flags.insecure) merged.insecure = true;
  merged.host ??= sanitizeHost(hostname());
  return merged;
}

function toRemoteMember(p: Peer, host: string, now: number): RemoteMember {
  const reach = reachOf(p, now);
  const m: RemoteMember = { id: p.id, kind: p.kind, name: p.name, origin: p.origin, host, reach };
  if (p.record?.status !== undefined) m.status = p.record.status;
  if (reach.word === 'waiting') m.deaf = true;
  return m;
}

export async function relayRun(opts: {
  root: string;
  /** This user's key directory (the nodes' records, and the other machines' keys, are in trust/ beside it). */
  keysDir: string;
  flags: RelayFlags;
  now(): number;
  log(line: string): void;
  live(): Peer[];
  presenceTtlS?: number;
  trace?: boolean;
}): Promise<void> {
  const settings = checkSettings(settingsFrom(opts.root, opts.flags));
  const { runRelay } = await import('./run.js');
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const onSignal = () => stop();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await runRelay({
      root: opts.root,
      keysDir: opts.keysDir,
      settings,
      now: opts.now,
      log: opts.log,
      stopped,
      localMembers: () => opts.live().map((p) => toRemoteMember(p, settings.host, opts.now())),
      ...(opts.presenceTtlS !== undefined ? { presenceTtlS: opts.presenceTtlS } : {}),
      ...(opts.trace !== undefined ? { trace: opts.trace } : {}),
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

export function relayConfig(root: string, flags: RelayFlags): { file: string; settings: Partial<RelaySettings> } {
  ensureRoot(root);
  const settings = settingsFrom(root, flags);
  checkSettings(settings);
  return { file: writeConfig(root, settings), settings };
}

interface StatusView {
  configured: boolean;
  running: boolean;
  connected: boolean;
  host: string | null;
  hub: string | null;
  pid: number | null;
  lastContact: number | null;
  outboundBacklog: number | null;
  inboundBacklog: number | null;
  published: number;
  imported: number;
  duplicates: number;
  conflicts: number;
  rejects: number;
  parked: Parked[];
  lastError: string | null;
  /** The hub's shape as the relay last checked it (null before a check, or not running). */
  cluster: { name: string | null; replicas: number; wanted: number; leader: string | null; current: number } | null;
  /** What waits, per direction, and why (a message stuck for more than STUCK_MS is never hidden). */
  waiting: { out: Waiting; in: Waiting };
}

interface Waiting {
  /** Messages that wait (null when nobody knows: no relay running, the hub never asked). */
  count: number | null;
  /** When the oldest of them was found (outbound only), or null. */
  since: number | null;
  /** Why they wait, or null when they are merely in flight. */
  reason: string | null;
  /** Parked as bad input or refused for good in this direction (never retried; see `parked`). */
  parked: number;
}

/** An outbound message unacknowledged for longer than this is reported as stuck, with a reason. */
const STUCK_MS = 3_000;

/** Why messages wait, from the relay's last status: the first that applies. */
function waitReason(s: RelayStatus | null, running: boolean, now: number, count: number | null, since: number | null): string | null {
  if (!count) return null;
  if (!running) return 'the relay is not running';
  if (!s?.connected) return 'not connected to the hub';
  const hv = s.hubView;
  if (hv?.problemKind === 'no-quorum') return `no replica quorum on the hub (${hv.problem ?? 'the stream has no leader'})`;
  if (hv?.problemKind === 'refused') return `refused by the hub: ${hv.problem ?? ''}`.trim();
  if (since !== null && now - since > STUCK_MS) return `not acknowledged by the hub for ${Math.round((now - since) / 1000)}s${s.lastError ? ` (${s.lastError})` : ''}`;
  return null;
}

/** How long a running relay may go without rewriting its status file (it does every second). */
const STATUS_FRESH_MS = 10_000;

export function relayStatus(root: string, now: number, alive: (pid: number) => boolean): StatusView {
  const cfg = readConfig(root);
  const s: RelayStatus | null = readStatus(root);
  const running = s !== null && alive(s.pid) && now - s.updatedAt < STATUS_FRESH_MS;
  const parked = listParked(root);
  const outCount = running ? (s?.outboundBacklog ?? null) : null;
  const outSince = running ? (s?.outboundSince ?? null) : null;
  const inCount = running ? (s?.inboundBacklog ?? null) : null;
  const hv = running ? s?.hubView : undefined;
  return {
    configured: cfg !== null,
    running,
    connected: running && (s?.connected ?? false),
    host: s?.host ?? cfg?.host ?? null,
    hub: s?.hub ?? cfg?.server ?? null,
    pid: running ? (s?.pid ?? null) : null,
    lastContact: s?.lastContact ?? null,
    outboundBacklog: running ? (s?.outboundBacklog ?? null) : null,
    inboundBacklog: running ? (s?.inboundBacklog ?? null) : null,
    published: s?.published ?? 0,
    imported: new ImportedSet(root).size,
    duplicates: s?.duplicates ?? 0,
    conflicts: parked.filter((p) => p.kind === 'conflict').length,
    rejects: parked.filter((p) => p.kind !== 'conflict').length,
    parked,
    lastError: s?.lastError ?? null,
    cluster: hv && hv.replicas > 0 ? { name: hv.cluster, replicas: hv.replicas, wanted: hv.wanted ?? hv.replicas, leader: hv.leader, current: hv.current } : null,
    waiting: {
      out: { count: outCount, since: outSince, reason: waitReason(s, running, now, outCount, outSince), parked: parked.filter((p) => p.kind === 'outbound').length },
      in: { count: inCount, since: null, reason: waitReason(s, running, now, inCount, null), parked: parked.filter((p) => p.kind !== 'outbound').length },
    },
  };
}

export function formatStatus(v: StatusView, now: number): string {
  const ago = (t: number | null) => (t === null ? 'never' : `${Math.max(0, Math.round((now - t) / 1000))}s ago`);
  const lines = [
    `relay:      ${v.running ? `running (pid ${v.pid})` : 'not running'}${v.configured ? '' : ', not configured'}`,
    `connected:  ${v.connected ? 'yes' : 'no'}`,
    `host:       ${v.host ?? '-'}`,
    `hub:        ${v.hub ?? '-'}`,
    `contact:    ${ago(v.lastContact)}`,
    `replicas:   ${v.cluster ? `${v.cluster.replicas}${v.cluster.wanted !== v.cluster.replicas ? ` (${v.cluster.wanted} wanted: the hub did not let this relay change them)` : ''}${v.cluster.name ? ` (cluster ${v.cluster.name}, leader ${v.cluster.leader ?? 'none'}, ${v.cluster.current} of ${v.cluster.replicas} current)` : ''}` : '-'}`,
    `backlog:    out ${v.outboundBacklog ?? '-'}, in ${v.inboundBacklog ?? '-'}`,
    ...(['out', 'in'] as const).map((d) => `waiting ${d === 'out' ? 'out' : 'in: '} ${waitingLine(v.waiting[d], now)}`),
    `traffic:    published ${v.published}, imported ${v.imported}, duplicates ${v.duplicates}`,
    `parked:     ${v.conflicts} conflicts, ${v.rejects} rejects`,
  ];
  for (const p of v.parked.slice(-5)) lines.push(`  ${p.kind} ${p.id ?? '-'} ${p.subject ?? ''}: ${p.reason}`);
  if (v.lastError) lines.push(`last error: ${v.lastError}`);
  return lines.join('\n');
}

function waitingLine(w: Waiting, now: number): string {
  const age = w.since !== null && w.count ? `, oldest ${Math.max(0, Math.round((now - w.since) / 1000))}s` : '';
  const parked = w.parked > 0 ? `; ${w.parked} parked as bad input` : '';
  return `${w.count ?? '-'}${age}${w.reason ? `: ${w.reason}` : ''}${parked}`;
}

/** `attend relay resync --since <time>`: republish local messages since then, then exit. */
export async function relayResync(opts: { root: string; keysDir: string; flags: RelayFlags; since: number; now(): number }): Promise<{ published: number; duplicates: number; failed: number }> {
  const settings = checkSettings(settingsFrom(opts.root, opts.flags));
  const { resync } = await import('./resync.js');
  return resync({ root: opts.root, keysDir: opts.keysDir }, settings, opts.since, opts.now);
}

/** `2026-11-30T10:00Z`, an epoch in ms, or a duration back from now (`90m`, `2h`, `3d`). */
export function parseSince(text: string, now: number): number {
  const d = /^(\d+)(s|m|h|d)$/.exec(text);
  if (d) return now - Number(d[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[d[2] as 's' | 'm' | 'h' | 'd'];
  if (/^\d{10,}$/.test(text)) return Number(text);
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw usageError(`--since '${text.slice(0, 40)}' is not a time (an ISO date, epoch ms, or 90m / 2h / 3d)`);
  return t;
}

export { configFile };
