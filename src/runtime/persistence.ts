/**
 * Where agent snapshots are kept. A store holds `AgentSnapshot`s by agent id; the in-memory
 * store is the default, the file store writes one JSON file per agent (atomically: write to a
 * temporary file, then rename), so a crash never leaves half a snapshot.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorInfo } from '../core/errors.js';
import type { AgentSnapshot } from './agent-ref.js';
import { RuntimeError } from './errors.js';

/** Where agent snapshots are saved: `createMemoryStore`, `createFileStore`, or your own. */
export interface SnapshotStore {
  save(snapshot: AgentSnapshot): Promise<void>;
  load(id: string): Promise<AgentSnapshot | undefined>;
  delete(id: string): Promise<boolean>;
  /** Ids of the stored agents. */
  list(): Promise<string[]>;
}

/** Keeps snapshots in memory (as JSON text, so what comes back is a copy that went through JSON). */
export function createMemoryStore(): SnapshotStore {
  const texts = new Map<string, string>();
  return {
    async save(snapshot) {
      texts.set(snapshot.id, JSON.stringify(snapshot));
    },
    async load(id) {
      const text = texts.get(id);
      return text === undefined ? undefined : (JSON.parse(text) as AgentSnapshot);
    },
    async delete(id) {
      return texts.delete(id);
    },
    async list() {
      return [...texts.keys()];
    },
  };
}

const SUFFIX = '.agent.json';

/** Keeps snapshots as `<dir>/<encoded id>.agent.json`. */
export function createFileStore(dir: string): SnapshotStore {
  const fileOf = (id: string) => join(dir, `${encodeURIComponent(id)}${SUFFIX}`);
  return {
    async save(snapshot) {
      await mkdir(dir, { recursive: true });
      const target = fileOf(snapshot.id);
      const temporary = `${target}.${process.pid}.${Date.now()}.tmp`;
      await writeFile(temporary, `${JSON.stringify(snapshot, null, 2)}\n`, 'utf8');
      await rename(temporary, target);
    },
    async load(id) {
      let text: string;
      try {
        text = await readFile(fileOf(id), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      try {
        return JSON.parse(text) as AgentSnapshot;
      } catch (error) {
        throw new RuntimeError(errorInfo('invalid_snapshot', `snapshot file ${fileOf(id)} is not valid JSON: ${(error as Error).message}`, { subject: fileOf(id) }), id);
      }
    },
    async delete(id) {
      try {
        await rm(fileOf(id));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      return names.filter((name) => name.endsWith(SUFFIX)).map((name) => decodeURIComponent(name.slice(0, -SUFFIX.length)));
    },
  };
}
