// A verb's input, checked against its zod schema (style.md, "Commands"). A failure is a usage
// error (exit 2) naming the field; each front end says the field its own way (`--max-depth`
// in the CLI) through `field`.

import type { z } from 'zod';
import { usageError } from '../wire/errors.js';

/** The input as the schema makes it, or a usage error for its first problem: `<field>: <message>`. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, field: (path: string) => string = (p) => p): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  throw usageError(`${path.length > 0 ? `${field(path)}: ` : ''}${issue?.message ?? 'invalid input'}`);
}
