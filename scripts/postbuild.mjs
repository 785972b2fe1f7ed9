// Makes the built bin executable: tsc does not keep file modes, and npm links the bin as-is.
import { chmodSync, existsSync } from 'node:fs';
const bin = new URL('../dist/tools/cli/bin.js', import.meta.url);
if (existsSync(bin)) chmodSync(bin, 0o755);
