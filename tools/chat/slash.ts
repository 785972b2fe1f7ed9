// Slash commands (issue #5 §3): parse one line, run it against ChatActions, return what to
// show. Errors come back as notices, never thrown into the UI.

import { AttendError } from '../bus/errors.js';
import type { Peer } from '../bus/roster.js';
import { parseChannelName } from '../wire/names.js';
import { neutralize } from '../wire/render.js';
import type { ChatActions } from './actions.js';
import { matchName } from './state/routing.js';

export const COMMANDS: Record<string, string> = {
  help: '/help — this list',
  whois: '/whois @name — who someone is',
  peers: '/peers — everyone live',
  join: '/join #c — join (or create) a channel',
  leave: '/leave [#c] — leave a channel',
  channels: '/channels — every channel',
  create: '/create #c [description] — create a channel',
  describe: '/describe #c text — set a channel description',
  invite: '/invite @name [#c] — invite someone',
  kick: '/kick @name [#c] — remove someone',
  dissolve: '/dissolve [#c] — delete a channel and its history',
  reply: '/reply [text] — reply to the newest message here',
  purge: '/purge [#c] — delete old history (keeps what may be unread)',
  clear: '/clear — clear this tab (display only)',
  mouse: '/mouse — toggle mouse-wheel scrolling (off keeps terminal selection)',
  quit: '/quit — leave attend chat',
};

export interface SlashEnv {
  actions: ChatActions;
  /** The channel of the active tab, when it is one. */
  tabChannel: string | null;
  /** The message /reply answers when none is given. */
  replyTarget(): { id: string; sender: string } | undefined;
}

export interface SlashOutcome {
  lines: { text: string; level: 'info' | 'error' }[];
  clear?: boolean;
  quit?: boolean;
  toggleMouse?: boolean;
  /** The draft is consumed (false: keep it for the operator to fix). */
  consumed: boolean;
  /** A channel was created, joined or dissolved: refresh tabs. */
  channelsChanged?: boolean;
  switchTo?: string;
}

export function parseSlash(line: string): { name: string; args: string[]; rest: string } | null {
  const m = /^\/([A-Za-z]*)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!m) return null;
  const rest = (m[2] ?? '').trim();
  return { name: (m[1] ?? '').toLowerCase(), args: rest.length ? rest.split(/\s+/) : [], rest };
}

function channelArg(raw: string | undefined, fallback: string | null): string {
  const name = raw ?? (fallback !== null ? fallback : undefined);
  if (name === undefined) throw new AttendError('name a channel (#name), or run this from a channel tab', 2);
  const parsed = parseChannelName(name);
  if (!parsed.ok) throw new AttendError(parsed.reason, 2);
  return parsed.name;
}

function personArg(raw: string | undefined, peers: Peer[], extraIds: string[] = []): { id: string; name: string } {
  if (raw === undefined || raw.replace(/^@/, '').length === 0) throw new AttendError('name someone: @name', 2);
  const q = raw.replace(/^@/, '');
  const pool = [...peers.map((p) => ({ id: p.id, name: p.name })), ...extraIds.filter((id) => !peers.some((p) => p.id === id)).map((id) => ({ id, name: id }))];
  const m = matchName(q, pool, (p) => p.name, (p) => p.id);
  if (m.kind === 'one') return m.item;
  if (m.kind === 'ambiguous') throw new AttendError(`@${q} is ambiguous: ${m.items.map((p) => p.name).join(', ')}`, 2);
  throw new AttendError(`nobody called @${q}${peers.length ? `; live: ${peers.map((p) => p.name).join(', ')}` : ''}`, 1);
}

function peerStatus(p: Peer): string {
  const x = p as Peer & { deaf?: boolean; status?: string };
  if (x.deaf === true || x.status === 'deaf') return 'deaf';
  return p.record?.status ?? (p.kind === 'human' ? 'here' : 'live');
}

function describePeer(p: Peer, channels: string[]): string {
  const parts = [`${neutralize(p.name)} (${p.kind})`, `id ${p.id}`, `at ${neutralize(p.origin)}`, peerStatus(p)];
  if (channels.length) parts.push(`in ${channels.map((c) => `#${c}`).join(' ')}`);
  return parts.join(' · ');
}

export function runSlash(line: string, env: SlashEnv): SlashOutcome {
  const cmd = parseSlash(line);
  const info = (text: string) => ({ text, level: 'info' as const });
  if (!cmd) return { lines: [{ text: `not a command: ${neutralize(line.slice(0, 40))}`, level: 'error' }], consumed: false };
  const a = env.actions;
  try {
    switch (cmd.name) {
      case 'help':
        return { lines: Object.values(COMMANDS).map(info), consumed: true };
      case 'peers': {
        const peers = a.peers();
        if (peers.length === 0) return { lines: [info('nobody is live')], consumed: true };
        const chans = a.channels();
        return { lines: peers.map((p) => info(describePeer(p, chans.filter((c) => c.members.includes(p.id)).map((c) => c.name)))), consumed: true };
      }
      case 'whois': {
        const p = personArg(cmd.args[0], a.peers());
        const peer = a.peers().find((x) => x.id === p.id);
        const chans = a.channels().filter((c) => c.members.includes(p.id)).map((c) => c.name);
        return { lines: [info(peer ? describePeer(peer, chans) : `${p.id}: not live`)], consumed: true };
      }
      case 'channels': {
        const list = a.channels();
        if (list.length === 0) return { lines: [info('no channels yet: /create #name')], consumed: true };
        return {
          lines: list.map((c) => info(`#${c.name}${c.joined ? ' (joined)' : ''} — ${c.members.length} member${c.members.length === 1 ? '' : 's'}${c.description ? ` — ${neutralize(c.description)}` : ''}`)),
          consumed: true,
        };
      }
      case 'join': {
        const c = channelArg(cmd.args[0], null);
        return { lines: [info(a.join(c))], consumed: true, channelsChanged: true, switchTo: `#${c}` };
      }
      case 'leave': {
        const c = channelArg(cmd.args[0], env.tabChannel);
        return { lines: [info(a.leave(c))], consumed: true, channelsChanged: true };
      }
      case 'create': {
        const c = channelArg(cmd.args[0], null);
        const desc = cmd.rest.slice((cmd.args[0] ?? '').length).trim();
        return { lines: [info(a.create(c, desc))], consumed: true, channelsChanged: true, switchTo: `#${c}` };
      }
      case 'describe': {
        const c = channelArg(cmd.args[0], null);
        const text = cmd.rest.slice((cmd.args[0] ?? '').length).trim();
        if (!text) throw new AttendError('/describe #c needs the description text', 2);
        return { lines: [info(a.describe(c, text))], consumed: true };
      }
      case 'invite':
      case 'kick': {
        const c = channelArg(cmd.args[1], env.tabChannel);
        const members = a.channels().find((x) => x.name === c);
        const who = personArg(cmd.args[0], a.peers(), [...(members?.members ?? []), ...(members?.invited ?? [])]);
        return { lines: [info(cmd.name === 'invite' ? a.invite(who.id, c) : a.kick(who.id, c))], consumed: true };
      }
      case 'dissolve': {
        const c = channelArg(cmd.args[0], env.tabChannel);
        return { lines: [info(a.dissolve(c))], consumed: true, channelsChanged: true, switchTo: 'merged' };
      }
      case 'purge': {
        const c = channelArg(cmd.args[0], env.tabChannel);
        const r = a.purge(c);
        return { lines: [info(`#${c}: deleted ${r.removed}, kept ${r.kept}; ${r.rule}`)], consumed: true };
      }
      case 'reply': {
        const target = env.replyTarget();
        if (!target) throw new AttendError('nothing to reply to in this tab', 1);
        if (!cmd.rest) throw new AttendError(`/reply needs text (replying to ${target.sender})`, 2);
        const r = a.reply(target.id, cmd.rest);
        return { lines: [info(`replied to ${neutralize(target.sender)} (${r.scopes.join(', ')})`), ...r.notes.map(info)], consumed: true };
      }
      case 'clear':
        return { lines: [], clear: true, consumed: true };
      case 'mouse':
        return { lines: [], toggleMouse: true, consumed: true };
      case 'quit':
      case 'exit':
        return { lines: [], quit: true, consumed: true };
      default:
        return { lines: [{ text: `unknown command /${neutralize(cmd.name.slice(0, 30))}; /help lists them`, level: 'error' }], consumed: false };
    }
  } catch (err) {
    const e = err as Error & { hint?: string };
    return { lines: [{ text: `${e.message}${e.hint ? ` (${e.hint})` : ''}`, level: 'error' }], consumed: false };
  }
}
