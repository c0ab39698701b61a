/**
 * Strict validation of a skill folder, following the Agent Skills reference validator
 * (skills-ref): the folder must exist and hold a SKILL.md whose front matter obeys every rule,
 * and each failure is reported in the reference validator's words. With `spec: 'agentskills'`
 * only the standard fields are accepted; the default (`skillstate`) also accepts skillstate's extension fields.
 *
 * A SKILL.md that is not a regular file (a FIFO, a socket, a device, a folder) is an error and is
 * never opened for a blocking read; bytes that are not UTF-8 are an error naming their offset. A
 * folder holding both SKILL.md and skill.md is validated on SKILL.md, with a warning that
 * skill.md is ignored.
 *
 * I/O: reads the folder and its SKILL.md. Never writes.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Diagnostic } from '../core/diagnostics.js';
import { optionsProblem } from '../core/options.js';
import { manifestSpecProblem, type ManifestSpec, type SkillManifest } from './fields.js';
import { ManifestError } from './errors.js';
import { bothManifestsDiagnostic, MANIFEST_NAMES, readManifestHead, type ManifestHead } from './folder.js';
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

/** The options `validateSkillDir` takes. */
const VALIDATE_OPTIONS = { spec: true, maxBytes: true } as const satisfies Record<keyof ValidateOptions, true>;

/** The options of `validateSkillDir`. */
export interface ValidateOptions {
  /** Whose rules judge the skill: the reference's (`'agentskills'`) or skillstate's (the default). */
  spec?: ManifestSpec;
  /** The most bytes of SKILL.md read. */
  maxBytes?: number;
}

/** Validates a skill folder strictly. Never throws for a bad skill: the problems are in `errors`. */
export async function validateSkillDir(dir: string, options: ValidateOptions = {}): Promise<ValidationResult> {
  // Options it cannot read are the caller's mistake, not the skill's: refused, whatever the folder holds.
  const refused = optionsProblem('validateSkillDir', options, VALIDATE_OPTIONS, "{ spec: 'agentskills' }") ?? manifestSpecProblem(options.spec);
  if (refused) throw new ManifestError(refused);
  const result = (errors: string[], file?: string): ValidationResult => ({ dir, file, valid: false, errors, warnings: [], manifest: undefined });
  try {
    if (!(await stat(dir)).isDirectory()) return result([`Not a directory: ${dir}`]);
  } catch {
    return result([`Path does not exist: ${dir}`]);
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
  for (const name of MANIFEST_NAMES) {
    const file = path.join(dir, name);
    let head: ManifestHead;
    try {
      head = await readManifestHead(file, maxBytes, true);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      // The message of a ManifestError already names the file; strip it to keep the reference's style.
      const message = error instanceof ManifestError ? error.message.slice(`${file}: `.length) : `${file} cannot be read: ${(error as Error).message}`;
      return result([message], file);
    }
    const report = inspectSkillManifest(head.text, { file, dirName: path.basename(path.resolve(dir)), strict: true, spec: options.spec, maxBytes });
    const errors = head.invalidUtf8At === undefined ? report.errors : [`SKILL.md is not valid UTF-8: byte ${head.invalidUtf8At} is not part of a UTF-8 character`, ...report.errors];
    const both = name === MANIFEST_NAMES[0] ? bothManifestsDiagnostic(dir, report.parsed?.manifest.id) : undefined;
    return {
      dir,
      file,
      valid: errors.length === 0 && report.parsed !== undefined,
      errors,
      warnings: [...(both ? [both] : []), ...report.diagnostics.filter((item) => item.level !== 'info')],
      manifest: report.parsed?.manifest,
    };
  }
  return result(['Missing required file: SKILL.md']);
}
