// The person's private files of one bus (issue 24, "nothing else on the machine can"): what
// lets a process act as the person from outside a terminal, so what a worker must not be
// able to write or read. Two things are such files today:
//
//   web/       `attend web`'s server record and the one-time login tokens `attend web
//              --login` mints (a token here is a browser session that writes as the person)
//   adapters/  the outlets' settings and secrets, their ledgers and the runner's lock (an
//              outlet here is an inbound route whose replies are signed with the person's key)
//
// They are kept in the key directory, not in the bus root: `<keysDir>/buses/<bus>/`, where
// <bus> is the bus root's attend key (its path's slug and hash, as a project tray is named;
// one key directory serves every bus of the user).
// Every process that can write the bus can write its root, `state/` and `cache/` (the
// sandbox's allowWrite lists them), but the key directory is hidden from sandboxed commands
// (denyRead puts a tmpfs over it) and denied to the Read and Edit tools by attend install's
// permission rules — the same reach as a private key, which is what these files amount to.
// Nothing reads these files from the bus root any more: a file planted there is not honoured.

import { join } from 'node:path';
import { AttendError, EXIT } from '../../wire/errors.js';
import { attendKey } from '../../wire/names.js';
import { ensureDir } from '../store/root.js';
import { keyDirectoryOf, keyDirectoryProblem, openKeyDirectory } from './anchors.js';

/** The per-bus directory's name: the root's attend key (no node:crypto: whoami and peers never load it). */
export function privateDirName(root: string): string {
  return attendKey(root);
}

function keysDirFor(root: string): string {
  const keysDir = keyDirectoryOf(root);
  if (keysDir === undefined) throw new AttendError(`no key directory is known for the bus ${root}`, EXIT.environment);
  return keysDir;
}

/** Where the person's private files of the bus at `root` are; nothing is created or checked. */
export function privateDirOf(root: string): string {
  return join(keysDirFor(root), 'buses', privateDirName(root));
}

/**
 * `privateDirOf(root)/<sub>`, for reading: refused (exit 5) when the key directory could be
 * written or read by others, since then these files would be anyone's.
 */
export function privatePath(root: string, ...sub: string[]): string {
  const problem = keyDirectoryProblem(keysDirFor(root));
  if (problem) throw problem;
  return join(privateDirOf(root), ...sub);
}

/** Like privatePath, with the directories made (0700) so a file can be written there. */
export function openPrivateDir(root: string, ...sub: string[]): string {
  openKeyDirectory(keysDirFor(root));
  const dir = join(privateDirOf(root), ...sub);
  ensureDir(dir);
  return dir;
}
