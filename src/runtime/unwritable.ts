/**
 * Why a database file cannot be written where it is, in words a person can act on: the file is
 * read-only, or its folder is (SQLite makes the database there when it is new, and a `-wal` and
 * a `-shm` file beside it). Asked once opening failed, so that the driver's bare "attempt to
 * write a readonly database" (or an error number) is said plainly. Checks the permissions of the
 * process as it runs: a superuser writes through any file mode, and is told nothing here.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Whether this process may write `place` (false for a read-only file system too). */
function writable(place: string): boolean {
  try {
    accessSync(place, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** What keeps the database at `path` from being written, finishing "cannot open … for writing: …"; undefined when nothing does. */
export function whyUnwritable(path: string): string | undefined {
  const folder = dirname(path);
  if (!existsSync(path)) return writable(folder) ? undefined : `its folder is read-only, so the file cannot be made there`;
  if (!writable(path)) return 'the file is read-only';
  const name = basename(path);
  if (!writable(folder)) return `its folder is read-only, and SQLite makes ${name}-wal and ${name}-shm beside the file`;
  return undefined;
}
