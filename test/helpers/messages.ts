// In-memory messages for the pure chat tests: every field a reader would have filled.
import type { Message } from '../../tools/bus/store/messages.js';
import type { Scope } from '../../tools/wire/envelope.js';

/** A maker of messages with ids `<prefix>000001`, … and times `baseTime + n`. */
export function messageMaker(prefix: string, baseTime: number): (over?: Partial<Message> & { scope?: Scope }) => Message {
  let seq = 0;
  return (over = {}) => {
    seq++;
    const id = over.id ?? `${prefix}${String(seq).padStart(6, '0')}`;
    return {
      id,
      scope: over.scope ?? { kind: 'open' },
      time: over.time ?? baseTime + seq,
      path: `/x/${id}.signal`,
      from: 'claude:sid-1',
      project: 'p',
      cwd: '/p',
      fromKind: 'agent',
      fromId: over.fromId ?? 'sid-1',
      to: over.to ?? '*',
      body: over.body ?? `body ${seq}`,
      legacy: false,
      ...(over.re !== undefined ? { re: over.re } : {}),
    };
  };
}
