// The relay's settings: flags, or the config file `attend relay config ...` writes under the
// bus root (so `status` and `doctor` know a relay is meant to run here). No NATS here.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../bus/store/index.js';
import { refusedError, usageError } from '../wire/errors.js';
import { ensureDir } from '../bus/store/index.js';

export interface RelaySettings {
  server: string;
  host: string;
  creds?: string;
  tlsCa?: string;
  insecure?: boolean;
}

function relayDir(root: string): string {
  return join(root, 'relay');
}

export function configFile(root: string): string {
  return join(relayDir(root), 'config.json');
}

export const HOST_CLASS = /^[a-z0-9-]{1,32}$/;

/** A machine's name as a subject token and a roster label: `[a-z0-9-]{1,32}`. */
export function sanitizeHost(raw: string): string {
  const s = raw
    .toLowerCase()
    .split('.')[0]!
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/, '');
  return s.length > 0 ? s : 'host';
}

export function readConfig(root: string): Partial<RelaySettings> | null {
  const file = configFile(root);
  if (!existsSync(file)) return null;
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const out: Partial<RelaySettings> = {};
    if (typeof v.server === 'string') out.server = v.server;
    if (typeof v.host === 'string') out.host = v.host;
    if (typeof v.creds === 'string') out.creds = v.creds;
    if (typeof v.tlsCa === 'string') out.tlsCa = v.tlsCa;
    if (v.insecure === true) out.insecure = true;
    return out;
  } catch {
    throw usageError(`the relay config ${file} is not valid JSON`, 'attend relay config --server nats://... to rewrite it');
  }
}

export function writeConfig(root: string, settings: Partial<RelaySettings>): string {
  ensureDir(relayDir(root));
  const file = configFile(root);
  writeFileAtomic(file, `${JSON.stringify(settings, null, 2)}\n`);
  return file;
}

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

interface ServerCheck {
  servers: string[];
  loopback: boolean;
  tls: boolean;
}

/**
 * Check the settings before any connection: a server off this machine needs TLS (unless
 * `--insecure`, e.g. inside an SSH tunnel's far end that is not loopback) and credentials.
 */
export function checkSettings(s: Partial<RelaySettings>): RelaySettings & ServerCheck {
  if (!s.server) throw usageError('no hub: pass --server nats://host:4222 or run attend relay config --server ...');
  const host = s.host ?? '';
  if (!HOST_CLASS.test(host)) throw usageError(`--host '${host}' must match [a-z0-9-]{1,32}`);
  const servers = s.server.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  let loopback = true;
  let tls = s.tlsCa !== undefined;
  for (const srv of servers) {
    let url: URL;
    try {
      url = new URL(srv.includes('://') ? srv : `nats://${srv}`);
    } catch {
      throw usageError(`--server '${srv}' is not a URL (nats://host:port or tls://host:port)`);
    }
    if (!['nats:', 'tls:'].includes(url.protocol)) throw usageError(`--server '${srv}': use nats:// or tls://`);
    if (url.protocol === 'tls:') tls = true;
    if (!isLoopback(url.hostname)) loopback = false;
  }
  if (!loopback && !tls && !s.insecure) {
    throw refusedError(`refusing a hub off this machine without TLS (${s.server})`, 'pass --tls-ca FILE, use tls://, or --insecure inside a private network');
  }
  if (!loopback && !s.creds) {
    throw refusedError(`refusing a hub off this machine without credentials (${s.server})`, 'pass --creds FILE (attend relay hub-config writes one per host)');
  }
  return { ...(s as RelaySettings), host, servers, loopback, tls };
}
