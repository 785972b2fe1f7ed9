// Publishing a chunk of messages to the stream with one reply subscription and one deadline.
//
// `js.publish` makes a request per message: an inbox entry, a timer and two error objects
// each (the client builds them up front for their stack traces), which at thousands of
// messages a second cost more than the messages. The stream's acknowledgement is just a
// reply, so this publishes each message with a reply subject under one subscription of our
// own and gives the whole chunk one timer. Deduplication (`Nats-Msg-Id`) and the server's
// answers are the same as with `js.publish`, and so are the errors a refusal settles with
// (tools/relay/nats-errors.ts tells them apart).

import { type MsgHdrs, type NatsConnection, type Subscription, errors, headers, nuid } from '@nats-io/transport-node';
import { type ApiError, JetStreamApiError } from '@nats-io/jetstream';
import type { Pending } from './outbound.js';

export interface PubAck {
  duplicate: boolean;
}

interface PubItem {
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs;
}

/** The headers one local message is published with (docs/cross-machine.md, "How it works"). */
export function pubHeaders(p: Pending, host: string): MsgHdrs {
  const h = headers();
  // Nats-Msg-Id: the hub stores one copy per id and destination (its duplicate window).
  h.set('Nats-Msg-Id', p.msgId);
  h.set('Attend-Id', p.id);
  h.set('Attend-Origin', host);
  // The signature travels with its message; the receiver checks it before it imports.
  if (p.sig) h.set('Attend-Sig', Buffer.from(p.sig).toString('base64'));
  return h;
}

interface Waiter {
  subject: string;
  resolve(v: PubAck): void;
  reject(e: Error): void;
}

export class Publisher {
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly waiting = new Map<string, Waiter>();
  private seq = 0;

  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix: string,
  ) {
    this.prefix = `${inboxPrefix}.pub.${nuid.next()}`;
    this.sub = nc.subscribe(`${this.prefix}.*`, {
      callback: (err, m) => {
        if (err) return;
        const w = this.waiting.get(m.subject);
        if (!w) return;
        this.waiting.delete(m.subject);
        // A status reply: 503 when no stream captures the subject (the hub lost it), which the
        // client's own request reports as a NoRespondersError.
        if (m.headers?.hasError) {
          if (m.headers.code === 503) return w.reject(new errors.NoRespondersError(w.subject));
          return w.reject(new Error(`${m.headers.code} ${m.headers.description}`));
        }
        try {
          const v = JSON.parse(new TextDecoder().decode(m.data)) as { error?: ApiError; duplicate?: boolean };
          // The stream's refusal, with its code, as `js.publish` throws it.
          if (v.error) w.reject(new JetStreamApiError(v.error));
          else w.resolve({ duplicate: v.duplicate === true });
        } catch {
          w.reject(new Error('the hub answered with something that is not a publish acknowledgement'));
        }
      },
    });
  }

  /** Publish every item; each settles with the hub's answer, or a timeout after `timeoutMs`. */
  async publishAll(items: PubItem[], timeoutMs: number): Promise<PromiseSettledResult<PubAck>[]> {
    const keys: string[] = [];
    const all = items.map((it) => {
      const reply = `${this.prefix}.${(++this.seq).toString(36)}`;
      keys.push(reply);
      return new Promise<PubAck>((resolve, reject) => {
        this.waiting.set(reply, { subject: it.subject, resolve, reject });
        try {
          this.nc.publish(it.subject, it.data, { reply, headers: it.headers });
        } catch (err) {
          this.waiting.delete(reply);
          reject(err as Error);
        }
      });
    });
    const timer = setTimeout(() => {
      for (const k of keys) {
        const w = this.waiting.get(k);
        if (!w) continue;
        this.waiting.delete(k);
        w.reject(new Error('timeout: the hub did not acknowledge'));
      }
    }, timeoutMs);
    try {
      return await Promise.allSettled(all);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.sub.unsubscribe();
  }
}
