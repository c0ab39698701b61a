/**
 * Opening a file of a skill for reading without ever blocking on something that is not a file.
 * A FIFO named `SKILL.md` would hold an ordinary `open()` until some process writes to it (and
 * hold a thread of Node's pool with it); a device or a socket is no better. The file is opened
 * with `O_NONBLOCK`, which makes opening a FIFO return at once and changes nothing for a regular
 * file, and the open handle is then checked with `fstat`, so nothing can be swapped in between
 * the check and the read.
 *
 * I/O: opens files read-only. Never reads from anything but a regular file, never writes.
 */
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/** What a path turned out to be when it is not a regular file. */
export type NotRegularKind = 'directory' | 'FIFO' | 'socket' | 'character device' | 'block device' | 'other';

/** Thrown by `openRegularFile` for a path that exists but is not a regular file. */
export class NotRegularFileError extends Error {
  /** The path that was opened. */
  readonly file: string;
  /** What it is instead. */
  readonly kind: NotRegularKind;
  constructor(file: string, kind: NotRegularKind) {
    super(`'${file}' is a ${kind}, not a regular file; it is not read`);
    this.name = 'NotRegularFileError';
    this.file = file;
    this.kind = kind;
  }
}

/** The kind of a non-regular file, for messages. */
export function fileKind(info: Stats): NotRegularKind {
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'FIFO';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'character device';
  if (info.isBlockDevice()) return 'block device';
  return 'other';
}

// Windows has no O_NONBLOCK (and no FIFOs a skill folder could hold).
const READ_NONBLOCK = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Opens `file` for reading and returns the handle with its `Stats`, or throws
 * `NotRegularFileError` (after closing it) when it is a directory, FIFO, socket or device.
 * Errors of `open` itself (`ENOENT`, `EACCES`, `ENXIO` for a socket...) are thrown as they are.
 */
export async function openRegularFile(file: string): Promise<{ handle: FileHandle; info: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(file, READ_NONBLOCK);
  } catch (error) {
    // Opening a Unix socket fails with ENXIO: say what it is rather than "no such device".
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') throw new NotRegularFileError(file, 'socket');
    throw error;
  }
  let info: Stats;
  try {
    info = await handle.stat();
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (!info.isFile()) {
    await handle.close();
    throw new NotRegularFileError(file, fileKind(info));
  }
  return { handle, info };
}

/**
 * `openRegularFile`, synchronously, returning a file descriptor: for discovery, where a few small
 * reads of a local file cost far less than a round trip through the I/O thread pool each.
 */
export function openRegularFileSync(file: string): { fd: number; info: Stats } {
  let fd: number;
  try {
    fd = openSync(file, READ_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') throw new NotRegularFileError(file, 'socket');
    throw error;
  }
  let info: Stats;
  try {
    info = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!info.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(file, fileKind(info));
  }
  return { fd, info };
}
