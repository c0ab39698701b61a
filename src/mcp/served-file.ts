/**
 * A file as the Skills extension serves it: its exact bytes, their `sha256:` digest and length,
 * whether they are text (UTF-8 without a NUL: sent as text) or not (sent as a base64 blob), and a
 * MIME type chosen by content (a binary file by its leading bytes, a text file by its extension).
 *
 * Digests are cached by the file's path as listed, keyed on its size and modification time: a
 * listing of unchanged skills costs one `stat` per file, and a file rewritten in place is hashed
 * again.
 *
 * I/O: reads the file (regular files only: a FIFO or device is never opened for a blocking read).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { looksBinary } from '../manifest/resources.js';
import { openRegularFile } from '../manifest/regular.js';

/** What the extension publishes about one file, with what `resources/read` needs to send it. */
export interface ServedFileInfo {
  /** `sha256:` and 64 lowercase hex digits, over the file's bytes. */
  readonly digest: string;
  /** Length of the file's bytes. */
  readonly size: number;
  readonly mimeType: string;
  /** UTF-8 without NUL bytes: sent as `text`, otherwise as a base64 `blob`. */
  readonly text: boolean;
}

interface Cached extends ServedFileInfo {
  readonly mtimeMs: number;
}

const cache = new Map<string, Cached>();

/** Forgets every cached digest, so the next listing hashes every file again (a cold start). */
export function forgetDigests(): void {
  cache.clear();
}

/** The file's bytes, read whole, with what they are. */
export async function readServedFile(file: string): Promise<{ bytes: Buffer; info: ServedFileInfo }> {
  const { handle, info } = await openRegularFile(file);
  try {
    const bytes = await handle.readFile();
    return { bytes, info: remember(file, info.mtimeMs, bytes) };
  } finally {
    await handle.close();
  }
}

/** Digest, size and type of a file: from the cache when its size and modification time are unchanged. */
export async function servedFileInfo(file: string): Promise<ServedFileInfo> {
  const info = await stat(file);
  const cached = cache.get(file);
  if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached;
  const { handle, info: opened } = await openRegularFile(file);
  try {
    return remember(file, opened.mtimeMs, await handle.readFile());
  } finally {
    await handle.close();
  }
}

/** Digest and type of bytes just read, cached under the modification time seen when they were opened. */
function remember(file: string, mtimeMs: number, bytes: Buffer): Cached {
  const text = !looksBinary(bytes);
  const entry: Cached = { digest: sha256(bytes), size: bytes.length, mimeType: text ? textMimeType(file) : binaryMimeType(bytes), text, mtimeMs };
  cache.set(file, entry);
  return entry;
}

/** `sha256:<hex>` of bytes, as the extension writes digests. */
export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

const TEXT_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.cjs': 'text/javascript',
  '.ts': 'text/x-typescript',
  '.py': 'text/x-python',
  '.sh': 'text/x-shellscript',
};

/** A text file's type, by its extension (`text/plain` when it says nothing more). */
export function textMimeType(file: string): string {
  return TEXT_TYPES[path.extname(file).toLowerCase()] ?? 'text/plain';
}

const SIGNATURES: [string, number[]][] = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  ['application/pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['application/zip', [0x50, 0x4b, 0x03, 0x04]],
  ['application/gzip', [0x1f, 0x8b]],
  ['application/wasm', [0x00, 0x61, 0x73, 0x6d]],
];

/** A binary file's type, by its leading bytes (`application/octet-stream` when none is known). */
export function binaryMimeType(bytes: Uint8Array): string {
  for (const [type, signature] of SIGNATURES) if (signature.every((byte, index) => bytes[index] === byte)) return type;
  if (bytes.length >= 12 && Buffer.from(bytes.subarray(0, 4)).toString('latin1') === 'RIFF' && Buffer.from(bytes.subarray(8, 12)).toString('latin1') === 'WEBP') return 'image/webp';
  return 'application/octet-stream';
}
