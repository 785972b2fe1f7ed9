// After tsc: make the bin executable (tsc does not keep file modes, and npm links the bin
// as-is), then bundle the send fast path into one CommonJS file, fast-send.cjs. Loading ~20
// small ESM files costs `attend send` about as much as node's own start (issue #2,
// Performance); one CJS file costs ~2 ms. Without rolldown (it comes with vite) bin.js
// falls back to the ESM modules.
import { chmodSync, existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

for (const name of ['attend.cjs', 'bin.js']) {
  const bin = new URL(`../dist/tools/cli/${name}`, import.meta.url);
  if (existsSync(bin)) chmodSync(bin, 0o755);
}

const fast = fileURLToPath(new URL('../dist/tools/cli/fast-send.js', import.meta.url));
if (existsSync(fast)) {
  let rolldown;
  try {
    ({ rolldown } = await import('rolldown'));
  } catch {
    console.warn('postbuild: rolldown not found; the send fast path stays unbundled');
  }
  if (rolldown) {
    const out = fast.replace(/\.js$/, '.cjs');
    rmSync(out, { force: true });
    const build = await rolldown({ input: fast, platform: 'node', external: [/^node:/], logLevel: 'warn' });
    await build.write({ file: out, format: 'cjs', codeSplitting: false });
    await build.close();
  }
}
