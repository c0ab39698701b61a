/** Test helper: a registry watching real folders, with the changes and diagnostics it gives kept in order. */
import { afterEach } from 'vitest';
import { discoverSkills, type Diagnostic, type DocumentSkillRegistry } from '../../src/index.js';
import type { SkillChange } from '../../src/manifest/document-registry.js';

/** Runs `edit`, then waits (bounded) for the change the registry's watcher applies. */
export async function afterEdit(registry: DocumentSkillRegistry, edit: () => Promise<unknown>): Promise<SkillChange> {
  const next = registry.watcher!.nextChange();
  await edit();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no change applied within 5 s')), 5000)));
  try {
    return await Promise.race([next, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Call at the top level of a test file: returns `watched(root)`, which discovers the skills of
 * `root` and watches them (debounce 20 ms); each watcher is closed after its test.
 */
export function watchedRegistries() {
  const open: DocumentSkillRegistry[] = [];
  afterEach(() => {
    for (const registry of open.splice(0)) registry.watcher?.close();
  });
  return async function watched(root: string) {
    const changes: SkillChange[] = [];
    const diagnostics: Diagnostic[] = [];
    const registry = await discoverSkills({ extra: [root] }, { watch: { debounceMs: 20, onChange: (change) => void changes.push(change) }, onDiagnostic: (item) => void diagnostics.push(item) });
    open.push(registry);
    /** Resolves once a change the watcher applies makes `check` hold. */
    const until = (check: () => boolean) =>
      new Promise<void>((resolve) => {
        if (check()) return resolve();
        const stop = registry.watcher!.onChange(() => {
          if (!check()) return;
          stop();
          resolve();
        });
      });
    return { registry, changes, diagnostics, until };
  };
}
