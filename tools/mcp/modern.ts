// MCP's stateless revision, 2026-07-28, beside the 2025-11-25 session the SDK serves. The
// pinned SDK (1.x) speaks only the handshake era, and Claude Code opens its stdio servers on
// 2025-11-25 (its channel push exists only there), so this layer sits in front of the SDK
// Server on the same port: a message carrying the per-request `_meta` envelope is answered
// here, everything else goes to the SDK unchanged. The spec allows a dual-era server to
// serve both at once (basic/versioning, "Backward Compatibility").
//
// It serves the same tools through the same functions (listToolsResult, callTool), so there
// is one set of tools. What 2026-07-28 adds is served here: `server/discover`, the envelope
// check on every request (-32602 for a missing field, UnsupportedProtocolVersionError naming
// the supported revisions for a version this server does not serve per request), the
// `resultType` and cache fields on results, and `subscriptions/listen`. A message arriving
// is the resource `attend://inbox` changing: a listener that subscribes to it receives
// `notifications/resources/updated`, then reads the resource or calls `inbox`. Nothing is
// consumed by either, so the sensor and the Stop hook still deliver it.

import { PROTOCOL_VERSIONS, type ServerIdentity } from './info.js';

type Message = Record<string, unknown>;
type Id = string | number;

/** The revisions served per request, newest first. */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];
/** Every revision this server serves: per request, then through `initialize`. */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...PROTOCOL_VERSIONS];
export const INBOX_URI = 'attend://inbox';

const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';

// The spec's error codes (schema/2026-07-28/schema.ts).
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** How long a client may keep the tool list and the discovery result: fixed for a process. */
const STATIC_TTL_MS = 60 * 60 * 1000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is Id => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** A message that names its protocol version in `_meta`: a 2026-07-28-era message. */
export function claimsModern(m: Message): boolean {
  return isObject(m.params) && isObject(m.params._meta) && VERSION_KEY in m.params._meta;
}

interface ModernDeps {
  identity: ServerIdentity;
  /** The `tools/list` result, the same the SDK Server lists. */
  listTools(): { tools: unknown[] };
  /** One `tools/call` from its raw params, the same the SDK Server calls. */
  callTool(params: unknown): Record<string, unknown>;
  /** The same, for a client's `tools/call`: a tool that waits (`ask`) answers later. */
  callWaiting?(params: unknown): Record<string, unknown> | Promise<Record<string, unknown>>;
  send(m: Message): void;
  warn(line: string): void;
  /** How often an open subscription looks at the inbox; the channel push's interval. */
  intervalMs?: number;
}

interface Subscription {
  id: Id;
  /** What the inbox looked like when last seen (its size and newest id); null when not watched. */
  mark: string | null;
}

export interface ModernLayer {
  /** Whether this message is the modern layer's: an envelope, or a cancel of a subscription. */
  owns(m: Message): boolean;
  handle(m: Message): void;
  /** End every subscription with its graceful result (the server is shutting down). */
  close(): void;
}

export function createModernLayer(deps: ModernDeps): ModernLayer {
  const serverInfo = deps.identity.serverInfo;
  // The claude/channel push is a 2025-11-25 session's; a stateless client gets the inbox resource.
  const capabilities = { tools: {}, resources: { subscribe: true } };
  const subs = new Map<Id, Subscription>();
  let timer: NodeJS.Timeout | undefined;
  let warned = false;

  const result = (id: Id, r: Record<string, unknown>, cache?: { ttlMs: number; cacheScope: 'public' | 'private' }) =>
    deps.send({ jsonrpc: '2.0', id, result: { ...r, ...cache, resultType: 'complete', _meta: { [SERVER_INFO_KEY]: serverInfo } } });
  const error = (id: Id | null, code: number, message: string, data?: Record<string, unknown>) =>
    deps.send({ jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } });

  /** The inbox's size and newest message, read through the inbox tool; null if it cannot be read. */
  const inboxMark = (): string | null => {
    const r = deps.callTool({ name: 'inbox', arguments: { limit: 1 } });
    const page = r.structuredContent as { total?: number; messages?: { id?: string }[] } | undefined;
    if (r.isError || !page) {
      if (!warned) deps.warn(`attend mcp: cannot read the inbox for subscriptions/listen: ${JSON.stringify(r.content).slice(0, 300)}`);
      warned = true;
      return null;
    }
    return `${page.total ?? 0}:${page.messages?.[0]?.id ?? ''}`;
  };

  const tick = () => {
    timer = undefined;
    const mark = inboxMark();
    if (mark !== null) {
      for (const s of subs.values()) {
        if (s.mark === null || s.mark === mark) continue;
        s.mark = mark;
        deps.send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: INBOX_URI, _meta: { [SUBSCRIPTION_KEY]: s.id } } });
      }
    }
    schedule();
  };
  const schedule = () => {
    if (!timer && [...subs.values()].some((s) => s.mark !== null)) timer = setTimeout(tick, deps.intervalMs ?? 500);
  };

  const listen = (id: Id, params: Record<string, unknown>) => {
    const filter = params.notifications;
    if (!isObject(filter)) return error(id, INVALID_PARAMS, 'Invalid params: subscriptions/listen needs a notifications filter object');
    if (subs.has(id)) return error(id, INVALID_PARAMS, `Invalid params: a subscription with id ${JSON.stringify(id)} is already open`);
    const uris = Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions : [];
    // The honoured subset: the inbox resource. The tool list never changes, and there are no
    // prompts and no other resources, so those kinds are left out of the acknowledgment.
    const honoured = uris.includes(INBOX_URI) ? { resourceSubscriptions: [INBOX_URI] } : {};
    // The mark is taken before the acknowledgment, so a message that arrives after the client
    // has seen it is always a change. A stream with nothing to watch stays open, silent, until
    // it is cancelled or the server ends.
    subs.set(id, { id, mark: 'resourceSubscriptions' in honoured ? (inboxMark() ?? '') : null });
    deps.send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: honoured, _meta: { [SUBSCRIPTION_KEY]: id } } });
    schedule();
  };

  const request = (id: Id, method: string, params: Record<string, unknown>) => {
    const meta = params._meta as Record<string, unknown>;
    const version = meta[VERSION_KEY];
    if (typeof version !== 'string') return error(id, INVALID_PARAMS, `Invalid params: _meta ${VERSION_KEY} must be a string`);
    if (!MODERN_VERSIONS.includes(version)) {
      const why = PROTOCOL_VERSIONS.includes(version) ? `${version} is served through initialize, not per request` : version;
      return error(id, UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${why}`, { supported: [...SUPPORTED_VERSIONS], requested: version });
    }
    if (!isObject(meta[CAPS_KEY])) return error(id, INVALID_PARAMS, `Invalid params: _meta ${CAPS_KEY} is required (an object)`);
    switch (method) {
      case 'server/discover':
        return result(id, { supportedVersions: [...SUPPORTED_VERSIONS], capabilities, instructions: deps.identity.instructions }, { ttlMs: STATIC_TTL_MS, cacheScope: 'public' });
      case 'tools/list':
        return result(id, deps.listTools(), { ttlMs: STATIC_TTL_MS, cacheScope: 'public' });
      case 'tools/call': {
        const r = deps.callWaiting ? deps.callWaiting(params) : deps.callTool(params);
        if (r instanceof Promise) return void r.then((x) => result(id, x));
        return result(id, r);
      }
      case 'resources/list':
        return result(
          id,
          { resources: [{ uri: INBOX_URI, name: 'inbox', title: 'Received messages', description: 'The newest messages this session receives (the inbox tool, page 1); it changes when one arrives.', mimeType: 'application/json' }] },
          { ttlMs: STATIC_TTL_MS, cacheScope: 'public' },
        );
      case 'resources/read': {
        if (params.uri !== INBOX_URI) return error(id, INVALID_PARAMS, `Resource not found: ${JSON.stringify(params.uri)}; the resource is ${INBOX_URI}`, { uri: params.uri ?? null });
        const r = deps.callTool({ name: 'inbox', arguments: {} });
        if (r.isError) return error(id, INTERNAL_ERROR, (r.content as { text?: string }[] | undefined)?.[0]?.text ?? 'attend: the inbox cannot be read');
        return result(id, { contents: [{ uri: INBOX_URI, mimeType: 'application/json', text: JSON.stringify(r.structuredContent) }] }, { ttlMs: 0, cacheScope: 'private' });
      }
      case 'subscriptions/listen':
        return listen(id, params);
      default:
        return error(id, METHOD_NOT_FOUND, `Method not found: ${method} (protocol version ${version})`);
    }
  };

  return {
    owns(m) {
      if (claimsModern(m)) return true;
      // A stdio client cancels a subscription with a plain notifications/cancelled.
      return m.method === 'notifications/cancelled' && isObject(m.params) && isId(m.params.requestId) && subs.has(m.params.requestId);
    },
    handle(m) {
      const params = m.params as Record<string, unknown>;
      if (typeof m.method !== 'string') return;
      if (m.id === undefined) {
        // Notifications: only a cancel means anything here; after it the stream says nothing more.
        if (m.method === 'notifications/cancelled' && isId(params.requestId)) subs.delete(params.requestId);
        if (timer && ![...subs.values()].some((s) => s.mark !== null)) {
          clearTimeout(timer);
          timer = undefined;
        }
        return;
      }
      if (!isId(m.id)) return error(null, -32600, 'Invalid Request: the id must be a string or a number');
      try {
        request(m.id, m.method, params);
      } catch (err) {
        error(m.id, INTERNAL_ERROR, `attend: internal error in ${m.method}: ${(err as Error).message}`);
      }
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const s of subs.values()) deps.send({ jsonrpc: '2.0', id: s.id, result: { resultType: 'complete', _meta: { [SERVER_INFO_KEY]: serverInfo, [SUBSCRIPTION_KEY]: s.id } } });
      subs.clear();
    },
  };
}
