// Colour (issue #5 §1): a stable colour per identity, at the depth the terminal supports,
// and none at all under NO_COLOR (https://no-color.org). Chalk, which Ink uses, does not
// read NO_COLOR, so the decision is made here and a colourless UI passes no colours at all.

export type ColorDepth = 0 | 1 | 2 | 3;

export function detectColorDepth(env: Readonly<Record<string, string | undefined>>, isTTY: boolean): ColorDepth {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force === '0' || force === 'false') return 0;
  if (force === '1' || force === 'true') return 1;
  if (force === '2') return 2;
  if (force === '3') return 3;
  if (!isTTY) return 0;
  const term = env.TERM ?? '';
  if (term === 'dumb') return 0;
  const ct = (env.COLORTERM ?? '').toLowerCase();
  if (ct === 'truecolor' || ct === '24bit') return 3;
  if (/-256(color)?$/.test(term)) return 2;
  return 1;
}

const BASIC = ['cyan', 'green', 'yellow', 'magenta', 'blue', 'red', 'cyanBright', 'greenBright', 'yellowBright', 'magentaBright', 'blueBright'];
// Readable on dark and light backgrounds: mid-saturation 256-colour cube entries.
const CUBE = [33, 37, 41, 65, 67, 70, 97, 99, 104, 130, 133, 136, 166, 168, 172, 176, 31, 35, 61, 94, 125, 128, 160, 163];

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/** The colour for one identity, as an Ink `color` value, or undefined for no colour. */
export function colorFor(id: string, depth: ColorDepth): string | undefined {
  if (depth === 0) return undefined;
  const h = hash(id);
  if (depth === 1) return BASIC[h % BASIC.length];
  if (depth === 2) return `ansi256(${CUBE[h % CUBE.length]})`;
  const [r, g, b] = hslToRgb(h % 360, 0.55, 0.58);
  return `rgb(${r},${g},${b})`;
}

/** The accent colour for chrome (tab bar, destination) at a depth. */
export function accent(depth: ColorDepth, name: string): string | undefined {
  return depth === 0 ? undefined : name;
}
