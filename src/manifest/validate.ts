/**
 * Strict validation of a skill folder, following the Agent Skills reference validator
 * (skills-ref): the folder must exist and hold a SKILL.md whose front matter obeys every rule,
 * and each failure is reported in the reference validator's words. With `spec: 'agentskills'`
 * only the standard fields are accepted; the default (`skillstate`) also accepts skillstate's extension fields.
 *
 * I/O: reads the folder and its SKILL.md. Never writes.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Diagnostic } from '../core/diagnostics.js';
import type { ManifestSpec, SkillManifest } from './fields.js';
import { MANIFEST_NAMES } from './folder.js';
import { DEFAULT_MAX_MANIFEST_BYTES, inspectSkillManifest } from './parse.js';

/** What `validateSkillDir` returns: whether the skill folder is valid, and the problems found. */
export interface ValidationResult {
  dir: string;
  /** The SKILL.md validated, when there is one. */
  file: string | undefined;
  valid: boolean;
  /** Every problem, in the reference validator's words. Empty when valid. */
  errors: string[];
  /** Advice that does not make the skill invalid (e.g. a description over 500 characters in a skill that uses the extension fields). */
  warnings: Diagnostic[];
  manifest: SkillManifest | undefined;
}

/** Validates a skill folder strictly. Never throws for a bad skill: the problems are in `errors`. */
export async function validateSkillDir(dir: string, options: { spec?: ManifestSpec; maxBytes?: number } = {}): Promise<ValidationResult> {
  const result = (errors: string[], file?: string): ValidationResult => ({ dir, file, valid: false, errors, warnings: [], manifest: undefined });
  try {
    if (!(await stat(dir)).isDirectory()) return result([`Not a directory: ${dir}`]);
  } catch {
    return result([`Path does not exist: ${dir}`]);
  }
  for (const name of MANIFEST_NAMES) {
    const file = path.join(dir, name);
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      continue;
    }
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
    if (size > maxBytes) return result([`SKILL.md is ${size} bytes, over the ${maxBytes}-byte limit`], file);
    const text = await readFile(file, 'utf8');
    const report = inspectSkillManifest(text, { file, dirName: path.basename(path.resolve(dir)), strict: true, spec: options.spec, maxBytes });
    return {
      dir,
      file,
      valid: report.errors.length === 0 && report.parsed !== undefined,
      errors: report.errors,
      warnings: report.diagnostics.filter((item) => item.level !== 'info'),
      manifest: report.parsed?.manifest,
    };
  }
  return result(['Missing required file: SKILL.md']);
}
