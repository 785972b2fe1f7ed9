// Slash commands (issue #5 §3): parse one line, run it against ChatActions, return what to
// show. Errors come back as notices, never thrown into the UI.

import { AttendError, EXIT } from '../wire/errors.js';
import type { Peer } from '../bus/presence/index.js';
import { parseChannelArg } from '../verbs/channels/common.js';
import { CHANNEL_RULE } from '../verbs/channels/rule.js';
import { errorLine } from './hints.js';
import { keyHelpLines } from './keys.js';
import { neutralize, plural } from '../wire/render.js';
import { scopeName } from '../wire/display.js';
import type { ChatActions } from './actions.js';
import type { WaitOutcome } from '../verbs/ask.js';
import { peerStatusText } from './peer-status.js';
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
  dissolve: '/dissolve [#c] [--force] — delete a channel and its history (--force while others are live)',
  urgent: '/urgent [@name|#c] text — send it urgent: it wakes them now, even in focus',
  ask: '/ask @name text — ask someone; marked pending on the status line until they reply',
  reply: '/reply [text] — reply to the selected message (Alt-↑/↓), else the newest here',
  purge: '/purge [#c] — delete old history (keeps what may be unread)',
  claim: '/claim path… [--ttl 2h] [--reason text] — claim files (others are told before they edit them)',
  release: '/release [path…] — release your claims (all without a path)',
  claims: '/claims — the file claims that hold now',
  search: '/search words — find messages you may see, best match first (ids and threads)',
  clear: '/clear — clear this tab (display only)',
  mouse: '/mouse — toggle mouse-wheel scrolling (off keeps terminal selection)',
  quit: '/quit — leave attend chat',
};

interface SlashEnv {
  actions: ChatActions;
  /** Ends the waits of `/ask` (the chat is closing). */
  waits?: AbortSignal;
  /** The channel of the active tab, when it is one. */
  tabChannel: string | null;
  /** The message /reply answers: the selected one, else the newest from someone else. */
  replyTarget(): { id: string; sender: string } | undefined;
}

interface SlashOutcome {
  lines: { text: string; level: 'info' | 'error' }[];
  clear?: boolean;
  quit?: boolean;
  toggleMouse?: boolean;
  /** The draft is consumed (false: keep it for the operator to fix). */
  consumed: boolean;
  /** A channel was created, joined or dissolved: refresh tabs. */
  channelsChanged?: boolean;
  switchTo?: string;
  /** A reply was sent: the selection it answered is done. */
  replied?: boolean;
  /** `/ask`: the question sent and its pending answer, for the status line to show until it settles. */
  asked?: { id: string; name: string; answer: Promise<WaitOutcome> };
}

function parseSlash(line: string): { name: string; args: string[]; rest: string } | null {
  const m = /^\/([A-Za-z]*)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!m) return null;
  const rest = (m[2] ?? '').trim();
  return { name: (m[1] ?? '').toLowerCase(), args: rest.length ? rest.split(/\s+/) : [], rest };
}

/** The channel a command names: its argument, else the active channel tab. Validated by the command. */
function channelArg(raw: string | undefined, fallback: string | null): string {
  const name = raw ?? fallback ?? undefined;
  if (name === undefined) throw new AttendError('name a channel (#name), or run this from a channel tab', EXIT.usage);
  return name;
}

/** How a verb that resolves names should be told a person: an exact target (see actions.send). */
function target(p: { id: string; kind?: 'agent' | 'human' }): string {
  return p.kind === 'human' ? `human:${p.id}` : p.id;
}

function personArg(raw: string | undefined, peers: Peer[], extraIds: string[] = []): { id: string; name: string; kind?: 'agent' | 'human' } {
  if (raw === undefined || raw.replace(/^@/, '').length === 0) throw new AttendError('name someone: @name', EXIT.usage);
  const q = raw.replace(/^@/, '');
  const pool: { id: string; name: string; kind?: 'agent' | 'human' }[] = [
    ...peers.map((p) => ({ id: p.id, name: p.name, kind: p.kind })),
    ...extraIds.filter((id) => !peers.some((p) => p.id === id)).map((id) => ({ id, name: id })),
  ];
  if (q.startsWith('human:')) {
    const h = pool.find((p) => p.kind === 'human' && p.id === q.slice('human:'.length));
    if (h) return h;
    throw new AttendError(`no live human called ${q.slice('human:'.length)}`, EXIT.notFound);
  }
  const m = matchName(q, pool, (p) => p.name, (p) => p.id);
  if (m.kind === 'one') return m.item;
  if (m.kind === 'ambiguous') {
    // Same names (a human and an agent): the ids tell them apart, and an id names one.
    const dup = new Set(m.items.map((p) => p.name.toLowerCase())).size < m.items.length;
    throw new AttendError(`@${q} is ambiguous: ${m.items.map((p) => (dup ? `${p.name} (${p.id})` : p.name)).join(', ')}`, EXIT.usage);
  }
  const near = m.suggestions.slice(0, 3).map((p) => `@${p.name}`);
  throw new AttendError(
    `nobody called @${q}${near.length ? `; did you mean ${near.join(' or ')}?` : peers.length ? `; live: ${peers.map((p) => p.name).join(', ')}` : ''}`,
    EXIT.notFound,
  );
}

function flags(...words: string[]): string {
  const w = words.filter((x) => x.length > 0);
  return w.length > 0 ? ` (${w.join(', ')})` : '';
}

function describePeer(p: Peer, channels: string[]): string {
  const parts = [`${neutralize(p.name)} (${p.kind})`, `id ${p.id}`, `at ${neutralize(p.origin)}`, peerStatusText(p)];
  if (channels.length) parts.push(`in ${channels.map((c) => `#${c}`).join(' ')}`);
  return parts.join(' · ');
}

export { errorLine } from './hints.js';

export function runSlash(line: string, env: SlashEnv): SlashOutcome {
  const cmd = parseSlash(line);
  const info = (text: string) => ({ text, level: 'info' as const });
  if (!cmd) return { lines: [{ text: `not a command: ${neutralize(line.slice(0, 40))}`, level: 'error' }], consumed: false };
  const a = env.actions;
  try {
    switch (cmd.name) {
      case 'help':
        return { lines: [...Object.values(COMMANDS), ...keyHelpLines()].map(info), consumed: true };
      case 'peers': {
        const peers = a.peers();
        if (peers.length === 0) return { lines: [info('nobody is live')], consumed: true };
        const chans = a.channels();
        return { lines: peers.map((p) => info(describePeer(p, chans.filter((c) => c.members.includes(p.id)).map((c) => c.name)))), consumed: true };
      }
      case 'whois': {
        const peers = a.peers();
        const p = personArg(cmd.args[0], peers);
        const peer = peers.find((x) => x.id === p.id);
        const chans = a.channels().filter((c) => c.members.includes(p.id)).map((c) => c.name);
        return { lines: [info(peer ? describePeer(peer, chans) : `${p.id}: not live`)], consumed: true };
      }
      case 'channels': {
        const rows = a.listChannels().channels;
        const lines = rows.map((c) =>
          info(
            `${c.label}${flags(c.joined ? 'joined' : '', c.pinned && c.name !== 'open' ? 'pinned' : '')} — ${c.memberCount} member${c.memberCount === 1 ? '' : 's'}, ${c.liveCount} live${c.description ? ` — ${neutralize(c.description)}` : ''}`,
          ),
        );
        if (rows.length <= 1) lines.push(info('no other channels yet: /create #name'));
        lines.push(info(CHANNEL_RULE));
        return { lines, consumed: true };
      }
      case 'join': {
        const r = a.join(channelArg(cmd.args[0], null));
        if (r.channel === 'open') return { lines: [info('#open is the commons: always joined')], consumed: true, switchTo: '#open' };
        const lines = [info(r.alreadyMember ? `already in #${r.channel}` : `joined #${r.channel}${r.created ? ' (new channel)' : ''}`)];
        if (r.invited) lines.push(info(`invited by ${r.invited.by}: ${plural(r.invited.owed, 'earlier message')} owed to you${r.invited.older > 0 ? `, ${r.invited.older} older not shown` : ''}`));
        return { lines, consumed: true, channelsChanged: true, switchTo: `#${r.channel}` };
      }
      case 'leave': {
        const r = a.leave(channelArg(cmd.args[0], env.tabChannel));
        return { lines: [info(`left #${r.channel}${r.removed ? ' (it was empty and unpinned, so it is gone)' : ''}`)], consumed: true, channelsChanged: true };
      }
      case 'create': {
        const raw = channelArg(cmd.args[0], null);
        const r = a.create(raw, cmd.rest.slice(raw.length).trim());
        return { lines: [info(`created #${r.channel} (pinned) and joined it${r.description ? `: ${neutralize(r.description)}` : ''}`)], consumed: true, channelsChanged: true, switchTo: `#${r.channel}` };
      }
      case 'describe': {
        const raw = channelArg(cmd.args[0], null);
        const text = cmd.rest.slice(raw.length).trim();
        if (!text) throw new AttendError('/describe #c needs the description text', EXIT.usage);
        const r = a.describe(raw, text);
        return { lines: [info(`#${r.channel}: ${neutralize(r.description)}`)], consumed: true };
      }
      case 'invite': {
        const r = a.invite(target(personArg(cmd.args[0], a.peers())), channelArg(cmd.args[1], env.tabChannel));
        return { lines: [info(`invited ${neutralize(r.invitee.name)} to #${r.channel}${r.notice ? ' (told)' : ''}`)], consumed: true, channelsChanged: true };
      }
      case 'kick': {
        const raw = channelArg(cmd.args[1], env.tabChannel);
        const chan = parseChannelArg(raw);
        const members = chan.open ? [] : (a.channels().find((x) => x.name === chan.name)?.members ?? []);
        const r = a.kick(personArg(cmd.args[0], a.peers(), members).id, raw);
        return { lines: [info(`removed ${neutralize(r.kicked.name)} from #${r.channel}${r.notice ? ' (told)' : ''}`)], consumed: true, channelsChanged: true };
      }
      case 'dissolve': {
        const force = cmd.args.includes('--force');
        const rest = cmd.args.filter((x) => x !== '--force');
        const r = a.dissolve(channelArg(rest[0], env.tabChannel), force);
        const told = r.notified.length;
        return {
          lines: [info(`dissolved #${r.channel} (${r.removedMessages} message${r.removedMessages === 1 ? '' : 's'} deleted${told > 0 ? `, ${told} member${told === 1 ? '' : 's'} told` : ''})`)],
          consumed: true,
          channelsChanged: true,
          switchTo: 'merged',
        };
      }
      case 'purge': {
        const chan = parseChannelArg(channelArg(cmd.args[0], env.tabChannel));
        if (chan.open) throw new AttendError('#open is the commons: its history is not purged from chat', EXIT.refused, 'attend cleanup removes the messages of projects that are gone');
        const r = a.purge(chan.name);
        const held = r.heldBy.length > 0 ? `; kept what ${r.heldBy.length} live member${r.heldBy.length === 1 ? ' has' : 's have'} not been shown yet` : '';
        return { lines: [info(`#${chan.name}: deleted ${r.removed}, kept ${r.kept}${held}`)], consumed: true };
      }
      case 'claim': {
        // `--ttl D` anywhere before `--reason`; `--reason` takes the rest of the line.
        const at = cmd.args.indexOf('--reason');
        const words = at < 0 ? cmd.args : cmd.args.slice(0, at);
        const reason = at < 0 ? undefined : cmd.args.slice(at + 1).join(' ') || undefined;
        const t = words.indexOf('--ttl');
        const ttl = t < 0 ? undefined : words[t + 1];
        const paths = t < 0 ? words : [...words.slice(0, t), ...words.slice(t + 2)];
        const r = a.claim(paths, ttl, reason);
        return { lines: r.claims.map((c) => info(`claimed ${neutralize(c.pattern)} in ${neutralize(c.worktree)} until ${new Date(c.expires).toTimeString().slice(0, 5)}`)), consumed: true };
      }
      case 'release': {
        const r = a.release(cmd.args.length > 0 ? cmd.args : undefined);
        return { lines: r.released.length === 0 ? [info('you held no such claim')] : r.released.map((c) => info(`released ${neutralize(c.pattern)}`)), consumed: true };
      }
      case 'claims': {
        const r = a.claims();
        if (r.claims.length === 0) return { lines: [info('no claims hold')], consumed: true };
        return { lines: r.claims.map((c) => info(`${neutralize(c.pattern)} in ${neutralize(c.worktree)}: ${c.mine ? 'you' : neutralize(c.holder.name)}${c.reason ? ` — ${neutralize(c.reason)}` : ''}`)), consumed: true };
      }
      case 'reply': {
        const target = env.replyTarget();
        if (!target) throw new AttendError('nothing to reply to in this tab', EXIT.notFound);
        if (!cmd.rest) throw new AttendError(`/reply needs text (replying to ${target.sender})`, EXIT.usage);
        const r = a.reply(target.id, cmd.rest);
        return { lines: [info(`replied to ${neutralize(target.sender)} (${r.scopes.join(', ')})`), ...r.notes.map(info)], consumed: true, replied: true };
      }
      case 'search': {
        if (!cmd.rest) throw new AttendError('/search needs words to look for', EXIT.usage);
        const r = a.search(cmd.rest);
        if (r.hits.length === 0) return { lines: [info(`no matches for ${neutralize(cmd.rest)}`)], consumed: true };
        // One line a hit: bodies are data, shown neutralized and cut to a line's worth.
        const lines = r.hits.map(({ message: m, thread }) => info(`${m.id} ${neutralize(scopeName(m.scope))} ${neutralize(m.from)}: ${neutralize(m.body).slice(0, 120)}${thread !== m.id ? ` (thread ${thread})` : ''}`));
        return { lines: [info(`${plural(r.hits.length, 'match', 'matches')} for ${neutralize(cmd.rest)}:`), ...lines], consumed: true };
      }
      case 'ask': {
        const who = personArg(cmd.args[0], a.peers());
        const text = cmd.rest.slice(cmd.args[0]!.length).trim();
        if (!text) throw new AttendError(`/ask @${who.name} needs the question`, EXIT.usage);
        const r = a.ask(target(who), text, env.waits);
        return { lines: [info(`asked ${neutralize(who.name)} (${r.sent.id}); waiting for the reply`), ...r.sent.notes.map(info)], consumed: true, asked: { id: r.sent.id, name: who.name, answer: r.answer } };
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
    return { lines: [{ text: errorLine(err), level: 'error' }], consumed: false };
  }
}
