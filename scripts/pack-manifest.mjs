// `npm pack` / `npm publish` hooks (package.json prepack and postpack). The checkout builds at
// `npm install` through its `prepare` script (the README's one set-up command), but npm 11
// warns about any install-time script of a package installed from a tarball, and a tarball
// has no sources to build anyway. So the packed package.json leaves `prepare` out: `strip`
// builds dist/, keeps the checkout's package.json beside it and writes the one without
// `prepare` that npm then packs; `restore` (postpack) puts the checkout's back. A pack that
// dies in between leaves package.json.packing, which the next `strip` or `restore` restores
// first.
//
//   node scripts/pack-manifest.mjs strip     # ATTEND_PACK_PREBUILT=1: use the dist/ there
//   node scripts/pack-manifest.mjs restore

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const manifest = join(root, 'package.json');
const kept = join(root, 'package.json.packing');

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest);
}

const mode = process.argv[2];
if (mode === 'restore') restore();
else if (mode === 'strip') {
  restore();
  if (process.env.ATTEND_PACK_PREBUILT !== '1') execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (process.env.ATTEND_PACK_PREBUILT !== '1') execFileSync(process.execPath, [join(root, 'scripts', 'postbuild.mjs')], { stdio: 'inherit', cwd: root });
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
  process.exit(2);
}
