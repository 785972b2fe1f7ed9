// Text rendering for the CLI: tables on a terminal, plain blocks when piped, JSON on request.
// Every body and name from the bus goes through `neutralize` first.

import type { Message } from '../bus/store/index.js';
import { type NameLookup, addresseeLabel, partyLabel, scopeName } from '../wire/display.js';
import { formatAge, neutralize } from '../wire/render.js';

function pad(text: string, width: number): string {
  const cps = Array.from(text);
  if (cps.length > width) return `${cps.slice(0, Math.max(0, width - 1)).join('')}…`;
  return text + ' '.repeat(width - cps.length);
}

function when(m: Message, now: number): string {
  const d = new Date(m.time);
  if (now - m.time < 24 * 3600_000) return d.toTimeString().slice(0, 8);
  return d.toISOString().slice(0, 10);
}

export function formatTable(msgs: Message[], names: NameLookup, now: number, columns: number): string {
  // The Id column is as wide as the longest id: a cut id cannot be passed to `inbox <id>`.
  const idWidth = Math.min(40, Math.max(2, ...msgs.map((m) => m.id.length)));
  const widths = { when: 10, scope: 12, from: 14, sig: 4, to: 14, id: idWidth, re: 8 };
  const rest = Math.max(20, columns - Object.values(widths).reduce((a, b) => a + b, 0) - 8);
  const header = [pad('When', widths.when), pad('Scope', widths.scope), pad('From', widths.from), pad('Sig', widths.sig), pad('To', widths.to), pad('Id', widths.id), pad('Re', widths.re), 'Message'].join(' ');
  const rows = msgs.map((m) =>
    [
      pad(when(m, now), widths.when),
      pad(neutralize(scopeName(m.scope)), widths.scope),
      pad(m.heldReason !== undefined ? `?${neutralize(m.fromId)}` : neutralize(partyLabel(m.fromId, names)), widths.from),
      pad(m.sig ?? '', widths.sig),
      pad(neutralize(addresseeLabel(m, names)), widths.to),
      pad(m.id, widths.id),
      pad(m.re ? m.re.slice(-7) : '', widths.re),
      pad(neutralize(m.body), rest),
    ]
      .join(' ')
      .trimEnd(),
  );
  return [header, ...rows].join('\n');
}

export function formatBlock(m: Message, names: NameLookup, now: number): string {
  // A held message is never presented as from its sender (issue 14): its from is a claim.
  const from = m.heldReason !== undefined ? `claims ${neutralize(m.fromId)} (${m.fromKind})` : `${neutralize(partyLabel(m.fromId, names))} (${m.fromKind}${m.fromId !== names.me ? `, ${neutralize(m.fromId)}` : ''})`;
  const lines = [
    `── ${m.id}  ${neutralize(scopeName(m.scope))}  ${new Date(m.time).toISOString()} (${formatAge(now - m.time)} ago)`,
    ...(m.heldReason !== undefined ? [`held: ${neutralize(m.heldReason)}`] : []),
    `from: ${from}${m.sig !== undefined ? ` sig=${m.sig}` : ''}${m.newKeySince !== undefined ? ` (a new key since ${new Date(m.newKeySince).toISOString()}: not signed by its key before)` : ''}${m.onBehalfOf ? ` on behalf of ${neutralize(m.onBehalfOf)} (${m.obo === 'verified' ? 'verified' : 'claimed'})` : ''}`,
    `to: ${neutralize(addresseeLabel(m, names))}`,
  ];
  if (m.re) lines.push(`re: ${m.re}`);
  if ((m as { access?: string }).access === 'owner') lines.push('note: read as the owner of this bus; it was not sent to you');
  // Body lines are indented so nothing inside a body can pass for a header line.
  for (const line of neutralize(m.body, { multiline: true }).split('\n')) lines.push(`  ${line}`);
  return lines.join('\n');
}

