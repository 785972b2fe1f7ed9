// Claim patterns: a path relative to the work tree root, or a glob over such paths. Written
// here rather than taken from node's path.matchesGlob, which is experimental on Node 20.

const GLOB_CHARS = /[*?[]/;

/** Does this pattern hold glob characters (`*`, `?`, `[`)? */
export function isGlob(pattern: string): boolean {
  return GLOB_CHARS.test(pattern);
}

/**
 * The glob as an anchored regular expression over `/`-separated relative paths: `**` spans
 * directories, `*` and `?` stay within one, `[...]` is a class (`[!...]` negated).
 */
function globRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        // `**/` matches zero or more whole directories; a bare `**` anything at all.
        if (pattern[i + 2] === '/') {
          out += '(?:.*/)?';
          i += 2;
        } else {
          out += '.*';
          i += 1;
        }
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) out += '\\[';
      else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/**
 * Does a claim on `pattern` cover the file at `rel`? A plain path covers itself and, as a
 * directory, everything under it (`src` holds `src/a.ts`); a glob covers what it matches
 * and everything under a directory it matches. The empty pattern is the whole work tree.
 */
export function covers(pattern: string, rel: string): boolean {
  if (pattern === '' || pattern === rel || rel.startsWith(`${pattern}/`)) return true;
  if (!isGlob(pattern)) return false;
  const re = globRegExp(pattern);
  // The file, or one of the directories above it.
  for (let at = rel.length; at > 0; at = rel.lastIndexOf('/', at - 1)) {
    if (re.test(rel.slice(0, at))) return true;
  }
  return false;
}

/**
 * Do two claims overlap? Exactly for plain paths; for globs, when either covers the other's
 * plain form (two globs that only share some files, `a/*.ts` and `a/x*`, are not caught:
 * the check at edit time still is, file by file).
 */
export function overlaps(a: string, b: string): boolean {
  return covers(a, b) || covers(b, a);
}
