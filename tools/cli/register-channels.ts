// CLI wiring for channels, presence and the roster (issue #3): join, leave, channels,
// invite, kick, dissolve, peers, status, cleanup. Commands return data; this formats it.

import type { Command } from 'commander';
import { type Registrar, examples } from './registrar.js';
import { type Io, terminalWidth } from './io.js';
import type { Ctx } from './context.js';
import { formatAge, neutralize, plural } from '../wire/render.js';
import { reachShort } from '../wire/display.js';
import { type RelayHealth, waitingText } from '../bus/presence/index.js';
import { CHANNEL_RULE } from '../verbs/channels/rule.js';

function ago(ctx: Ctx, t: number | null): string {
  return t === null ? 'never' : `${formatAge(ctx.now() - t)} ago`;
}

/** Why retention kept a message for a party (tools/bus/delivery/shown.ts). */
const NOT_SHOWN: Record<string, string> = {
  'no-ledger': 'nothing has delivered to it yet',
  'not-yet': 'not shown yet',
  'arrived-late': 'arrived after its watermark had passed',
  'before-ledger': 'older than what its delivery began with',
};

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function pad(text: string, width: number): string {
  const cps = Array.from(text);
  if (cps.length > width) return `${cps.slice(0, Math.max(0, width - 1)).join('')}…`;
  return text + ' '.repeat(width - cps.length);
}

export const registerChannels: Registrar = (program: Command, ctx: Ctx, io: Io) => {
  program
    .command('join')
    .description('join a channel (created if it does not exist); #open is always joined')
    .argument('<channel>', 'channel name, with or without #')
    .option('--pin', 'pin the channel so it stays when everyone leaves')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend join ops', 'attend join "#design" --pin']))
    .action(async (channel: string, opts: { pin?: boolean; json?: boolean }) => {
      const { runJoin } = await import('../verbs/channels/index.js');
      const r = runJoin(ctx, { channel, pin: opts.pin });
      if (opts.json) return io.json(r);
      if (r.channel === 'open') return io.out('#open is the commons: always joined');
      io.out(r.alreadyMember ? `already in #${r.channel}` : `joined #${r.channel}${r.created ? ' (new channel)' : ''}${r.pinned ? ' (pinned)' : ''}`);
      if (r.invited) {
        io.out(`invited: ${r.invited.owed} earlier message${r.invited.owed === 1 ? '' : 's'} to read${r.invited.older > 0 ? `, ${r.invited.older} older not shown` : ''}`);
      }
    });

  program
    .command('leave')
    .description('leave a channel (#open cannot be left)')
    .argument('<channel>', 'channel name, with or without #')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend leave ops']))
    .action(async (channel: string, opts: { json?: boolean }) => {
      const { runLeave } = await import('../verbs/channels/index.js');
      const r = runLeave(ctx, { channel });
      if (opts.json) return io.json(r);
      io.out(`left #${r.channel}${r.removed ? ' (it was empty and unpinned, so it is gone)' : ''}`);
    });

  const channels = program
    .command('channels')
    .enablePositionalOptions()
    .description('list channels: members, live members, joined, pinned, description')
    .option('--joined', 'only channels you joined')
    .option('--json', 'print JSON (members with ids and display names)')
    .addHelpText(
      'after',
      examples([
        'attend channels',
        'attend channels --joined --json',
        'attend channels create ops "deploys and incidents"',
        'attend channels describe ops "deploys, incidents, on-call"',
        'attend channels pin ops',
      ]) + `\n${CHANNEL_RULE}\n`,
    )
    .action(async (opts: { joined?: boolean; json?: boolean }) => {
      const { runChannels } = await import('../verbs/channels/index.js');
      const r = runChannels(ctx, { joined: opts.joined });
      if (opts.json) return io.json(r);
      const { formatColumns } = await import('./table.js');
      const cols = [{ head: 'Channel', max: 20, min: 8 }, { head: 'Members' }, { head: 'Live' }, { head: 'Joined' }, { head: 'Pinned' }, { head: 'Description', min: 12 }];
      const rows = r.channels.map((c) => [c.label, String(c.memberCount), String(c.liveCount), c.joined ? 'yes' : 'no', c.pinned ? 'yes' : 'no', neutralize(c.description)]);
      const lines = [formatColumns(cols, rows, terminalWidth(ctx.stdout, ctx.env), [5, 0])];
      io.out(lines.join('\n'));
    });

  channels
    .command('create')
    .description('create a channel: pinned, empty, not joined')
    .argument('<channel>', 'channel name, with or without #')
    .argument('[description...]', 'one printable line')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend channels create ops "deploys and incidents"']))
    .action(async (channel: string, words: string[], opts: { json?: boolean }) => {
      const { runCreate } = await import('../verbs/channels/index.js');
      const r = runCreate(ctx, { channel, description: words.length > 0 ? words.join(' ') : undefined });
      if (opts.json) return io.json(r);
      io.out(`created #${r.channel} (pinned)`);
    });

  channels
    .command('describe')
    .description("show or set a channel's description (one printable line)")
    .argument('<channel>', 'channel name, with or without #')
    .argument('[text...]', 'the new description; omit to show it')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend channels describe ops', 'attend channels describe ops "deploys, incidents"']))
    .action(async (channel: string, words: string[], opts: { json?: boolean }) => {
      const { runDescribe } = await import('../verbs/channels/index.js');
      const r = runDescribe(ctx, { channel, text: words.length > 0 ? words.join(' ') : undefined });
      if (opts.json) return io.json(r);
      io.out(r.changed ? `#${r.channel}: ${neutralize(r.description)}` : neutralize(r.description) || `#${r.channel} has no description`);
    });

  for (const pinned of [true, false]) {
    channels
      .command(pinned ? 'pin' : 'unpin')
      .description(pinned ? 'pin a channel: it stays when everyone leaves' : 'unpin a channel: it goes when its last member leaves')
      .argument('<channel>', 'channel name, with or without #')
      .option('--json', 'print JSON')
      .addHelpText('after', examples([`attend channels ${pinned ? 'pin' : 'unpin'} ops`]))
      .action(async (channel: string, opts: { json?: boolean }) => {
        const { runPin } = await import('../verbs/channels/index.js');
        const r = runPin(ctx, { channel, pinned });
        if (opts.json) return io.json(r);
        io.out(`#${r.channel} ${r.pinned ? 'pinned' : 'unpinned'}`);
      });
  }

  program
    .command('invite')
    .description('invite a live session or human to a channel; they are told, and get its recent history when they join')
    .argument('<who>', 'a display name, session id, username or origin path')
    .argument('<channel>', 'channel name, with or without #')
    .option('--json', 'print JSON')
    .addHelpText('after', `${examples(['attend invite gemini-api ops', 'attend invite aaron "#design"'])}\n${CHANNEL_RULE}\n`)
    .action(async (who: string, channel: string, opts: { json?: boolean }) => {
      const { runInvite } = await import('../verbs/channels/index.js');
      const r = runInvite(ctx, { who, channel });
      if (opts.json) return io.json(r);
      io.out(`invited ${neutralize(r.invitee.name)} to #${r.channel}`);
    });

  program
    .command('kick')
    .description('remove a member from a channel and tell it (an agent cannot kick a human)')
    .argument('<who>', 'a member: display name, session id or username')
    .argument('<channel>', 'channel name, with or without #')
    .option('--json', 'print JSON')
    .addHelpText('after', `${examples(['attend kick gemini-api ops'])}\n${CHANNEL_RULE}\n`)
    .action(async (who: string, channel: string, opts: { json?: boolean }) => {
      const { runKick } = await import('../verbs/channels/index.js');
      const r = runKick(ctx, { who, channel });
      if (opts.json) return io.json(r);
      io.out(`kicked ${neutralize(r.kicked.name)} from #${r.channel}`);
    });

  program
    .command('dissolve')
    .description('delete a channel and its messages; refused while another member is live unless --force')
    .argument('<channel>', 'channel name, with or without #')
    .option('--force', 'dissolve even though other members are live (they are told)')
    .option('--json', 'print JSON')
    .addHelpText('after', `${examples(['attend dissolve scratch', 'attend dissolve ops --force'])}\n${CHANNEL_RULE}\n`)
    .action(async (channel: string, opts: { force?: boolean; json?: boolean }) => {
      const { runDissolve } = await import('../verbs/channels/index.js');
      const r = runDissolve(ctx, { channel, force: opts.force });
      if (opts.json) return io.json(r);
      io.out(`dissolved #${r.channel} (${plural(r.removedMessages, 'message')} removed, ${plural(r.notified.length, 'member')} told)`);
    });

  program
    .command('purge')
    .description("delete a channel's history except what a live member has not been shown yet")
    .argument('<channel>', 'channel name, with or without #')
    .option('--json', 'print JSON')
    .addHelpText('after', `${examples(['attend purge ops', "attend purge '#ops' --json"])}\n${CHANNEL_RULE}\n`)
    .action(async (channel: string, opts: { json?: boolean }) => {
      const { runPurge } = await import('../verbs/channels/index.js');
      const r = runPurge(ctx, { channel });
      if (opts.json) return io.json(r);
      const held = r.heldBy.length > 0 ? `; kept for ${r.heldBy.length} live member${r.heldBy.length === 1 ? '' : 's'} not yet shown them` : '';
      io.out(`purged #${r.channel}: ${r.removed} removed, ${r.kept} kept${held}`);
    });

  program
    .command('peers')
    .description('every live session and human: name, origin, status, channels, last seen, delivery, the files it claims')
    .option('--json', 'print JSON')
    .option('--tree', 'show the lineage: who started whom')
    .option('--cards', 'print every live node as an A2A AgentCard (JSON): yours signed, the others as they signed them')
    .addHelpText('after', examples(['attend peers', 'attend peers --tree', `attend peers --json | jq '.peers[] | select(.reach.word == "waiting")'`]))
    .action(async (opts: { json?: boolean; tree?: boolean; cards?: boolean }) => {
      if (opts.tree || opts.cards) return (await import('./register-trust.js')).printPeersTrust(ctx, io, opts);
      const { runPeers } = await import('../verbs/peers.js');
      const r = runPeers(ctx);
      if (opts.json) return io.json(r);
      if (r.peers.length === 0) return io.out('Nobody is live on this bus.');
      // A HOST column once another machine's members are listed (issue 13).
      const hosts = r.peers.some((p) => p.host !== null);
      // A FOCUS column once someone is in focus (issue 23 §3).
      const focus = r.peers.some((p) => p.focusUntil !== null);
      const { clockTime } = await import('../wire/attention.js');
      const { formatColumns } = await import('./table.js');
      const cols = [{ head: 'Name', max: 18, min: 8 }, ...(hosts ? [{ head: 'Host', max: 12, min: 4 }] : []), { head: 'Kind' }, { head: 'Status', max: 7, min: 4 }, ...(focus ? [{ head: 'Focus' }] : []), { head: 'Seen' }, { head: 'Delivery', max: 16, min: 8 }, { head: 'Channels', max: 24, min: 5 }, { head: 'Origin', min: 10 }];
      const rows = r.peers.map((p) => [
        `${neutralize(p.name)}${p.me ? ' (you)' : ''}`,
        ...(hosts ? [neutralize(p.host ?? 'here')] : []),
        p.kind,
        neutralize(p.status ?? '-'),
        ...(focus ? [p.focusUntil !== null ? `to ${clockTime(p.focusUntil)}` : '-'] : []),
        ago(ctx, p.lastSeen),
        reachShort(p.reach),
        p.channels.join(','),
        neutralize(p.origin),
      ]);
      // On a narrow terminal the origin (a path) gives way first, then channels, delivery, the name.
      const last = cols.length - 1;
      const lines = [formatColumns(cols, rows, terminalWidth(ctx.stdout, ctx.env), [last, last - 1, last - 2, 0, ...(hosts ? [1] : [])])];
      if (r.peers.some((p) => p.reach.word === 'waiting')) {
        const note = 'waiting: no conduit of it is live (no sensor, no Stop hook); messages wait on the bus until one runs.';
        const width = terminalWidth(ctx.stdout, ctx.env);
        lines.push('', ...(width === undefined ? [note] : (await import('../wire/width.js')).wrapColumns(note, width)));
      }
      // What each holds (issue 23 §2): a pattern from its work tree's root, as `attend claims` shows it.
      const holding = r.peers.filter((p) => p.holds.length > 0);
      if (holding.length > 0) lines.push('', ...holding.map((p) => `${neutralize(p.name)} holds ${p.holds.map((h) => neutralize(h)).join(', ')}`));
      io.out(lines.join('\n'));
    });

  program
    .command('status')
    .description('bus root, message counts per scope, your unread count and delivery')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend status', 'attend status --json']))
    .action(async (opts: { json?: boolean }) => {
      const { runStatus } = await import('../verbs/status.js');
      const { adapterHealth, healthLines } = await import('../adapters/health.js');
      const { processAlive } = await import('../identity/system.js');
      // Issue 24 §3: the outlets that reach the person's phone, what waits for them and why.
      const adapters = adapterHealth(ctx.root(), ctx.now(), (pid) => processAlive(pid, undefined, ctx.procInfo)).outlets;
      const r = { ...runStatus(ctx), adapters };
      if (opts.json) return io.json(r);
      const lines = [
        `bus:      ${r.busRoot}`,
        `me:       ${neutralize(r.me.name)} (${r.me.kind}, ${r.me.id})`,
        `inbox:    ${plural(r.inbox.total, 'message')}, ${r.inbox.unread} unread`,
        `channels: ${['#open', ...r.channels].join(', ')}`,
        `sensor:   ${r.presence.sensor !== null && ctx.now() - r.presence.sensor <= 90_000 ? `running (beat ${ago(ctx, r.presence.sensor)})` : 'not running'}`,
        `drain:    ${ago(ctx, r.presence.drain)}`,
      ];
      const l = r.delivery.ledger;
      lines.push(`ledger:   ${l.state === 'ok' ? `${l.consumedAbove} recent ids above ${l.watermarks} watermark${l.watermarks === 1 ? '' : 's'}, updated ${ago(ctx, l.updated ?? null)}` : l.state === 'missing' ? 'none yet (the first delivery starts it)' : 'corrupt (the next delivery rebuilds it)'}`);
      if (r.quarantined > 0) lines.push(`quarantine: ${r.quarantined} unreadable file${r.quarantined === 1 ? '' : 's'} set aside under ${neutralize(r.busRoot)}/quarantine (each with its reason)`);
      if (r.relay) lines.push(`relay:    ${r.relay.running ? (r.relay.connected ? 'connected' : 'not connected') : 'not running'} (${neutralize(r.relay.host ?? '?')} on ${neutralize(r.relay.hub ?? '?')})${r.relay.parked > 0 ? `, ${r.relay.parked} parked` : ''}${relayWaits(r.relay.waiting, ctx.now())}; attend relay status`);
      if (r.adapters.length > 0) {
        lines.push('adapters:', ...healthLines(r.adapters, ctx.now()).map((l) => `  ${l}`));
      }
      lines.push('scopes:');
      for (const s of r.scopes) lines.push(`  ${pad(neutralize(s.scope), 40)} ${pad(String(s.messages), 7)}${s.mine ? ' (yours)' : ''}`);
      io.out(lines.join('\n'));
    });

  program
    .command('cleanup')
    .description('remove messages of projects that are gone, empty trays, stale members and orphan channel directories')
    .option('--dry-run', 'list what would be removed, with sizes, and remove nothing')
    .option('--all', 'also remove per-session state (heartbeats, owed backlog, last shown, ledgers, sensor claims) of sessions that are gone, and lock owner files of processes that ended')
    .option('--older-than <duration>', 'also remove messages older than this (90d, 12h, 2w) from every scope, once every party each was for has been shown it')
    .option('--force', 'with --older-than: remove old messages even if some party has not been shown them (a person only)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `${examples(['attend cleanup --dry-run', 'attend cleanup', 'attend cleanup --all --json', 'attend cleanup --older-than 90d --dry-run', 'attend cleanup --older-than 90d --force'])}
A tray's project is judged by the slug part of its key against <claude dir>/projects/.
Never removed, but for --older-than: signals/_broadcast/, a channel directory whose
channel exists, the tray of a live session (even empty: its sensor watches it), any file
younger than the grace period (1 hour).
--older-than removes a message only when every party it was for has been shown it (its
consumption ledger says so): a direct message's addressees, a channel's members, whoever
was reading #open when it came. A party nothing has delivered to yet keeps its messages;
a person without a ledger reads history in chat and inbox and keeps nothing back. What is
kept, and for whom, is listed; --force (a person only) removes it too.
`,
    )
    .action(async (opts: { dryRun?: boolean; all?: boolean; json?: boolean; olderThan?: string; force?: boolean }) => {
      const { runCleanup } = await import('../verbs/cleanup.js');
      const r = runCleanup(ctx, { dryRun: opts.dryRun, all: opts.all, olderThan: opts.olderThan, force: opts.force });
      for (const n of r.notes) io.err(`attend: ${n}`);
      if (opts.json) return io.json(r);
      const verb = r.dryRun ? 'would remove' : 'removed';
      const lines = r.items.map((i) => `${verb} ${pad(i.kind, 11)} ${pad(size(i.bytes), 10)} ${neutralize(i.what)}  (${neutralize(i.reason)})`);
      const ret = r.retention;
      if (ret) {
        for (const sc of ret.scopes) lines.push(`${verb} ${pad('messages', 11)} ${pad(size(sc.bytes), 10)} ${sc.messages} in ${neutralize(sc.scope)} older than ${ret.olderThan}`);
        const { nameLookup } = await import('../wire/display.js');
        const { readKnownNames } = await import('../bus/presence/index.js');
        const names = nameLookup(ctx.live(), ctx.identity().id, readKnownNames(ctx.root()));
        const n = ret.force ? ret.forced : ret.kept;
        if (n > 0) {
          const head = ret.force
            ? `${r.dryRun ? 'would remove' : 'removed'} (--force) ${n} of them though not every party they were for has been shown them:`
            : `${r.dryRun ? 'would keep' : 'kept'} ${n} older message${n === 1 ? '' : 's'} not every party ${n === 1 ? 'it was' : 'they were'} for has been shown (--force removes ${n === 1 ? 'it' : 'them'}):`;
          lines.push(head);
          for (const h of ret.holders) {
            lines.push(`  ${neutralize(names.name(h.id))}: ${h.messages} in ${h.scopes.map((sc) => neutralize(sc)).join(', ')} (${h.why.map((w) => NOT_SHOWN[w] ?? w).join('; ')})`);
          }
        }
      }
      const count = r.items.length + (ret?.messages ?? 0);
      if (count === 0 && !(ret && ret.kept > 0)) return io.out(r.dryRun ? 'Nothing to clean up.' : 'Nothing removed.');
      lines.push(`${r.dryRun ? 'total (dry run)' : 'total'}: ${count} item${count === 1 ? '' : 's'}, ${size(r.bytes)}`);
      io.out(lines.join('\n'));
    });
};

/** `, waiting out 4, oldest 12s: no replica quorum …` for each direction where something waits with a reason. */
function relayWaits(w: RelayHealth['waiting'], now: number): string {
  return (['out', 'in'] as const)
    .filter((d) => w[d].reason !== null)
    .map((d) => `, waiting ${d} ${neutralize(waitingText({ ...w[d], parked: 0 }, now))}`)
    .join('');
}
