// The relay's verbs, called from the CLI (tools/cli/register-relay.ts loads this lazily):
// run, config, status, resync, hub-config. They return data; the CLI prints.

import { hostname } from 'node:os';
import { usageError } from '../wire/errors.js';
import type { RemoteMember } from '../bus/presence/index.js';
import { type Peer, type RelayWaiting, reachOf, relayWaiting, waitingText } from '../bus/presence/index.js';
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
  /** Where `live` reads from (the session records, the presence directory): watched for changes. */
  rosterDirs?: string[];
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
      ...(opts.rosterDirs !== undefined ? { rosterDirs: opts.rosterDirs } : {}),
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
  waiting: { out: RelayWaiting; in: RelayWaiting };
}

/** How long a running relay may go without rewriting its status file (at least every REST_MS, status-board.ts). */
const STATUS_FRESH_MS = 10_000;

export function relayStatus(root: string, now: number, alive: (pid: number) => boolean): StatusView {
  const cfg = readConfig(root);
  const s: RelayStatus | null = readStatus(root);
  const running = s !== null && alive(s.pid) && now - s.updatedAt < STATUS_FRESH_MS;
  const parked = listParked(root);
  const outParked = parked.filter((p) => p.kind === 'outbound').length;
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
    waiting: relayWaiting(s, running, now, { out: outParked, in: parked.length - outParked }),
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
    `waiting:    out ${waitingText(v.waiting.out, now)}`,
    `            in ${waitingText(v.waiting.in, now)}`,
    `traffic:    published ${v.published}, imported ${v.imported}, duplicates ${v.duplicates}`,
    `parked:     ${v.conflicts} conflicts, ${v.rejects} rejects`,
  ];
  for (const p of v.parked.slice(-5)) lines.push(`  ${p.kind} ${p.id ?? '-'} ${p.subject ?? ''}: ${p.reason}`);
  if (v.lastError) lines.push(`last error: ${v.lastError}`);
  return lines.join('\n');
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
