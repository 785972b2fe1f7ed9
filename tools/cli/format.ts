// Text rendering for the CLI: tables on a terminal, plain blocks when piped, JSON on request.
// Every body and name from the bus goes through `neutralize` first. Loaded lazily (it brings
// string-width), and so is terminalWidth's reader of the width: see table.ts.

import type { Message } from '../bus/store/index.js';
import { type NameLookup, addresseeLabel, partyLabel, scopeName } from '../wire/display.js';
import { formatAge, neutralize } from '../wire/render.js';
import { type Column, formatColumns } from './table.js';

function when(m: Message, now: number): string {
  const d = new Date(m.time);
  if (now - m.time < 24 * 3600_000) return d.toTimeString().slice(0, 8);
  return d.toISOString().slice(0, 10);
}

// The Id column is never cut: a cut id cannot be passed to `inbox <id>`. On a narrow
// terminal the message gives way first, then the names, then the scope and the Re stub.
const INBOX_COLUMNS: Column[] = [
  { head: 'When' },
  { head: 'Scope', max: 12, min: 5 },
  { head: 'From', max: 14, min: 6 },
  { head: 'Sig', max: 4 },
  { head: 'To', max: 14, min: 6 },
  { head: 'Id' },
  { head: 'Re', max: 8, min: 3 },
  { head: 'Message', min: 16 },
];
const INBOX_SHRINK = [7, 4, 2, 1, 6];

/** The inbox as a table; `columns` is the terminal's width, undefined when not a terminal. */
export function formatTable(msgs: Message[], names: NameLookup, now: number, columns: number | undefined): string {
  const rows = msgs.map((m) => [
    when(m, now),
    neutralize(scopeName(m.scope)),
    m.heldReason !== undefined ? `?${neutralize(m.fromId)}` : neutralize(partyLabel(m.fromId, names)),
    m.sig ?? '',
    neutralize(addresseeLabel(m, names)),
    m.id,
    m.re ? m.re.slice(-7) : '',
    `${m.urgency !== undefined ? `(${m.urgency}) ` : ''}${neutralize(m.body)}`,
  ]);
  return formatColumns(INBOX_COLUMNS, rows, columns, INBOX_SHRINK);
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
  if (m.urgency) lines.push(`urgency: ${m.urgency}`);
  if ((m as { access?: string }).access === 'owner') lines.push('note: read as the owner of this bus; it was not sent to you');
  // Body lines are indented so nothing inside a body can pass for a header line.
  for (const line of neutralize(m.body, { multiline: true }).split('\n')) lines.push(`  ${line}`);
  return lines.join('\n');
}

