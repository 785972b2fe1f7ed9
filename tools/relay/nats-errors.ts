// What an error from the NATS client means to the relay, decided by its class and, for the
// JetStream API, its error code: never by its message text, which the client and the server
// are free to reword (style.md; issue 19). test/e2e/relay-nats-errors.test.ts checks every
// predicate against what the pinned client (3.3.1) throws at a real nats-server, so a client
// that changes what it throws fails there rather than silently here.

import { errors } from '@nats-io/transport-node';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

/**
 * nats-server's JSStreamMessageExceedsMaximumErr ("message size exceeds maximum allowed", a
 * publish acknowledgement's error over the stream's max_msg_size). The client's
 * JetStreamApiCodes does not name it.
 */
const STREAM_MESSAGE_EXCEEDS_MAXIMUM = 10054;

function apiCode(err: unknown): number | undefined {
  return err instanceof JetStreamApiError ? err.code : undefined;
}

export function isStreamNotFound(err: unknown): boolean {
  return apiCode(err) === JetStreamApiCodes.StreamNotFound;
}

export function isConsumerNotFound(err: unknown): boolean {
  return apiCode(err) === JetStreamApiCodes.ConsumerNotFound;
}

/** The stream or one of this host's consumers is not on the hub (it lost its store). */
export function isStreamOrConsumerNotFound(err: unknown): boolean {
  return isStreamNotFound(err) || isConsumerNotFound(err);
}

/**
 * Nobody answered the subject: no stream captures it. The client reports it in layers: a KV
 * put (a JetStream publish) throws JetStreamNotEnabled around a RequestError around the
 * NoRespondersError, so the cause chain is searched for the class.
 */
export function isNoResponders(err: unknown): boolean {
  return inChain(err, errors.NoRespondersError);
}

/** An error of class `cls` is `err` or one of its causes. */
function inChain(err: unknown, cls: abstract new (...a: never[]) => unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 8; depth++) {
    if (e instanceof cls) return true;
    e = (e as Error).cause;
  }
  return false;
}

/**
 * The stream, or a KV bucket's stream, is missing on the hub: a publish that nobody answers,
 * or an API call that says so. Whoever sees it makes the stream or bucket again.
 */
export function isMissingOnHub(err: unknown): boolean {
  return isNoResponders(err) || isStreamNotFound(err);
}

/**
 * The hub will never take this message: it is over the stream's max_msg_size (the server's
 * acknowledgement says so with its code) or over the server's max_payload, which the client
 * checks before it sends. For a publish of bytes with a reply subject that check is the one
 * InvalidArgumentError `nc.publish` throws (@nats-io/nats-core lib/protocol.js); a bad
 * subject, a closed or draining connection are classes of their own.
 */
export function isTooLarge(err: unknown): boolean {
  return apiCode(err) === STREAM_MESSAGE_EXCEEDS_MAXIMUM || err instanceof errors.InvalidArgumentError;
}

/**
 * The cluster cannot place that many copies: nats-server's JSClusterNoPeersErr ("no suitable
 * peers for placement"), JSInsufficientResourcesErr, and JSStreamReplicasNotSupportedErr
 * (replicas on a server that is not clustered). The client's JetStreamApiCodes names none.
 */
const TOO_FEW_PEERS = new Set([10005, 10023, 10074]);

export function isTooFewPeers(err: unknown): boolean {
  const c = apiCode(err);
  return c !== undefined && TOO_FEW_PEERS.has(c);
}

/**
 * The cluster has no quorum for the stream: nats-server's JSClusterNotAvailErr ("JetStream
 * system temporarily unavailable"), JSStreamOfflineErr and JSClusterNotLeaderErr, JSClusterNoLeader... as the
 * server answers an API call while too few of the stream's peers are up.
 */
const NO_QUORUM = new Set([10008, 10118, 10009]);

export function isNoQuorum(err: unknown): boolean {
  const c = apiCode(err);
  return c !== undefined && NO_QUORUM.has(c);
}

/** A request nobody answered in time (the client's TimeoutError, anywhere in the cause chain). */
export function isTimeout(err: unknown): boolean {
  return inChain(err, errors.TimeoutError);
}

/** The hub said no: a JetStream API refusal or a permission violation (not a hub that is away). */
export function isRefused(err: unknown): boolean {
  return err instanceof JetStreamApiError || inChain(err, errors.PermissionViolationError);
}
