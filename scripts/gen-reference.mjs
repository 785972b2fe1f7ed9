#!/usr/bin/env node
// Writes docs/reference.md from the built CLI's own --help, so the reference cannot drift
// from the code. `--check` exits 1 when the file on disk is out of date (run by the tests).

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../dist/tools/cli/bin.js', import.meta.url));
const out = fileURLToPath(new URL('../docs/reference.md', import.meta.url));
const help = (args) => execFileSync(process.execPath, [bin, ...args, '--help'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '100' } });

const top = help([]);
const commands = [];
let inCommands = false;
for (const line of top.split('\n')) {
  if (line.startsWith('Commands:')) inCommands = true;
  else if (inCommands && /^\S/.test(line)) inCommands = false;
  else if (inCommands) {
    const m = /^ {2}([a-z][\w-]*)/.exec(line);
    if (m && m[1] !== 'help') commands.push(m[1]);
  }
}

const sections = [];
for (const cmd of commands) {
  sections.push(`### attend ${cmd}\n\n\`\`\`\n${help([cmd]).trimEnd()}\n\`\`\`\n`);
  const sub = help([cmd]);
  if (/^Commands:/m.test(sub)) {
    for (const line of sub.slice(sub.indexOf('Commands:')).split('\n').slice(1)) {
      const m = /^ {2}([a-z][\w-]*)/.exec(line);
      if (!m || m[1] === 'help') continue;
      sections.push(`#### attend ${cmd} ${m[1]}\n\n\`\`\`\n${help([cmd, m[1]]).trimEnd()}\n\`\`\`\n`);
    }
  }
}

const doc = `# CLI reference

Generated from \`attend --help\` by \`node scripts/gen-reference.mjs\`; a test fails when this
file is out of date.

## Exit codes

Every command uses one map. Callers branch on the code, never on the text of stderr.

| code | meaning |
| --- | --- |
| 0 | ok (also: a drain with nothing to deliver, a second sensor for the same session) |
| 1 | not found: no live recipient, unknown message id, unknown channel or member |
| 2 | usage: unknown flag, bad argument, invalid name or id, empty or oversized message, no TTY for chat |
| 3 | the bus cannot be used: root owned by another user or writable by group/world, IO failure |
| 4 | refused by a rule: not allowed for this identity, needs --force, already exists |
| 5 | environment: something needed is missing (e.g. no Claude Code session where one is required) |

Results go to stdout, diagnostics to stderr (one line each, prefixed \`attend:\`, with a
\`hint:\` line where one helps). Every listing verb takes \`--json\`.

## Commands

\`\`\`
${top.trimEnd()}
\`\`\`

${sections.join('\n')}`;

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(out, 'utf8');
  } catch {}
  if (current !== doc) {
    console.error('docs/reference.md is out of date: run node scripts/gen-reference.mjs');
    process.exit(1);
  }
} else {
  writeFileSync(out, doc);
  console.log(`wrote ${out} (${commands.length} commands)`);
}
