// The one way tests read what is on a bus: the message files under signals/ (never the
// `.index` hint beside them), parsed with the wire module every reader uses.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Envelope, parseSignal } from '../../tools/wire/envelope.js';

export interface OnDisk {
  dir: string;
  id: string;
  file: string;
  text: string;
  env: Envelope;
}

/** The messages in one scope directory (`_broadcast`, `@ops`, a tray key), oldest first. */
export function signalsIn(root: string, dir: string): OnDisk[] {
  const d = join(root, 'signals', dir);
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .filter((f) => f.endsWith('.signal'))
    .sort()
    .map((file) => {
      const text = readFileSync(join(d, file), 'utf8');
      const env = parseSignal(text.replace(/\n$/, ''));
      if (!env) throw new Error(`not a signal: ${dir}/${file}`);
      return { dir, id: file.slice(0, -'.signal'.length), file, text, env };
    });
}

/** Every message on the bus, keyed `dir/file`. */
export function allSignals(root: string): Record<string, OnDisk> {
  const base = join(root, 'signals');
  const out: Record<string, OnDisk> = {};
  if (!existsSync(base)) return out;
  for (const dir of readdirSync(base).sort()) for (const s of signalsIn(root, dir)) out[`${dir}/${s.file}`] = s;
  return out;
}
