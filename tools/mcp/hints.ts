// A hint (tools/wire/errors.ts) in MCP terms: the tool to call with its arguments, since a
// model talking to this server calls tools, not a shell. Verbs without a tool keep the CLI
// line.

import { type Hint, type HintVerb, hintForCli } from '../wire/errors.js';

/** Verbs served as tools, and the tool name for each. */
const TOOL: Partial<Record<HintVerb, string>> = {
  send: 'send',
  reply: 'reply',
  inbox: 'inbox',
  read: 'read',
  join: 'join',
  leave: 'leave',
  channels: 'channels',
  create: 'create',
  describe: 'describe',
  invite: 'invite',
  kick: 'kick',
  dissolve: 'dissolve',
  peers: 'peers',
  status: 'status',
  whoami: 'whoami',
};

export function hintForMcp(h: Hint, tools: ReadonlySet<string>): string {
  if ('text' in h) return h.text;
  const tool = TOOL[h.verb];
  if (!tool || !tools.has(tool)) return hintForCli(h);
  const args: Record<string, unknown> = Object.fromEntries(h.args ?? []);
  for (const f of h.flags ?? []) args[f] = true;
  return `the ${tool} tool with ${JSON.stringify(args)}${h.then ? ` ${h.then}` : ''}`;
}
