// A model's answer to a deliverer post (issue 21 §2): Claude Code tells the model to "reply via
// SendMessage to the `from=` address", which is the deliverer's reply socket, so the answer
// arrives there (tools/sensor/inbox-socket.ts) and is written to the bus as the session's
// reply to the newest message of the last post. Only an answer whose `from` is the session's
// own inbox socket counts: Claude Code writes the sender's own socket there, so another
// session's SendMessage to this address is not taken for this session's word (a process
// that forges the line is one of the same user, the boundary docs/trust.md names). An answer
// that cannot be sent is told to the model in a note of attend's own, not dropped in silence.

import type { ReplyLine } from '../wire/inbox-post.js';

type Answer = Extract<ReplyLine, { kind: 'answer' }>;

interface AnswerDeps {
  /** The session's inbox socket (CLAUDE_CODE_MESSAGING_SOCKET). */
  socket: string;
  /** Write the answer to the bus as the session's reply to `re`; resolves with its id, rejects with why not. */
  answered(answer: { text: string; re: string | undefined }): Promise<string>;
  /** Tell the model a line of attend's own (a post to its inbox). */
  tell(line: string): Promise<void>;
  warn(line: string): void;
}

export interface Answers {
  /** A line from the reply socket that is an answer. */
  take(a: Answer): void;
  /** The newest message of a post that counted: what the next answer threads under. */
  posted(newest: string): void;
  /** Resolves once every answer taken so far is written or told. */
  settled(): Promise<void>;
}

export function createAnswers(deps: AnswerDeps): Answers {
  let answering: string | undefined;
  const seen = new Set<string>();
  let chain: Promise<void> = Promise.resolve();
  const write = async (text: string, re: string | undefined) => {
    try {
      const id = await deps.answered({ text, re });
      deps.warn(`attend: the model's SendMessage answer is on the bus as ${id}${re !== undefined ? `, a reply to ${re}` : ''}`);
    } catch (err) {
      const why = (err as Error).message;
      deps.warn(`attend: the model's SendMessage answer was not sent: ${why}`);
      await deps.tell(`your SendMessage answer was not sent to the bus: ${why}. Send it with attend reply.`).catch((e: unknown) => deps.warn(`attend: cannot tell the session: ${(e as Error).message}`));
    }
  };
  return {
    take(a) {
      if (a.from !== `uds:${deps.socket}`) {
        deps.warn(`attend: a SendMessage from ${a.from.slice(0, 200) || 'no address'} came to the deliverer; only this session's own answers go to the bus`);
        return;
      }
      // The same line twice (a retry) is one answer.
      if (a.msgId !== undefined) {
        if (seen.has(a.msgId)) return;
        seen.add(a.msgId);
        if (seen.size > 64) seen.delete(seen.values().next().value as string);
      }
      const re = answering;
      // One at a time, in the order they came: two answers are two replies in that order.
      chain = chain.then(() => write(a.text, re));
    },
    posted(newest) {
      answering = newest;
    },
    settled: () => chain,
  };
}
