// What each register-*.ts module is handed by the composition root (cli.ts), in a module of
// its own so the registrars never import cli.ts back (no import cycle, issue 19).

import type { Command } from 'commander';
import type { Ctx } from './context.js';
import type { Io } from './io.js';

export type Registrar = (program: Command, ctx: Ctx, io: Io) => void;

/** The `Examples:` block every command's help ends with. */
export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}
