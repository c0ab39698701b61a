/**
 * `skillstate validate <dir...>`: strict validation of skill folders, in the Agent Skills
 * reference validator's words. A folder without a SKILL.md is searched for skill folders, each
 * validated and reported, and every folder the search passed over is named with the reason.
 * Exit 0 when every skill is valid and no folder that may hold a skill went unchecked (one that
 * cannot be read, or lies past the depth limit), 1 otherwise.
 */
import type { SkippedFolder } from '../../manifest/skipped-folder.js';
import { validateSkillTree } from '../../manifest/validate-tree.js';
import type { ValidationResult } from '../../manifest/validate.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';

export const validateCommand: Command = {
  name: 'validate',
  help: `Usage: skillstate validate [--spec agentskills|skillstate] [--json] <dir...>

Validates each skill folder strictly: SKILL.md present, front matter opening the file and closed,
a YAML mapping, every field within the specification. Problems are reported in the words of the
Agent Skills reference validator (skills-ref). A folder that holds no SKILL.md is searched for
skill folders (4 levels deep, as discovery searches) and each is validated.

Every folder the search passes over is named on stderr with the reason, in discovery's words:
hidden folders, node_modules and .git, folders seen twice through links and folders without a
SKILL.md are notes; a folder that cannot be read, or lies deeper than 4 levels, may hold a skill
that was not checked, and fails the run (name such a folder to validate it).

Exit code 1 when any skill is invalid or a folder that may hold a skill was not checked.

  --spec agentskills   accept only the standard fields and judge as skills-ref does: its verdict
                       and messages, its YAML subset (no flow style, anchors, tags or tabs)
  --spec skillstate    also accept the extension fields: version, toolsets, scripts, triggers,
                       default_enabled, brief_description (default)
  --json               print the skills' results as JSON (skipped folders are still named on stderr)`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({
      args,
      allowPositionals: true,
      options: { spec: { type: 'string', default: 'skillstate' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (!positionals.length) throw new UsageError('validate needs at least one skill folder');
    if (values.spec !== 'agentskills' && values.spec !== 'skillstate') throw new UsageError(`--spec must be agentskills or skillstate, not '${values.spec}'`);
    const results: ValidationResult[] = [];
    const skipped: SkippedFolder[] = [];
    let searched = false;
    let valid = true;
    for (const dir of positionals) {
      const tree = await validateSkillTree(dir, { spec: values.spec });
      searched ||= tree.results.length !== 1 || tree.results[0]!.dir !== dir;
      results.push(...tree.results);
      skipped.push(...tree.skipped);
      valid &&= tree.valid;
    }
    if (values.json) {
      io.out(`${JSON.stringify(results.map(({ manifest: _manifest, ...rest }) => rest), null, 2)}\n`);
    } else {
      for (const result of results) {
        if (result.valid) io.out(`Valid skill: ${result.dir}\n`);
        else {
          io.err(`Validation failed for ${result.dir}:\n`);
          for (const error of result.errors) io.err(`  - ${error}\n`);
        }
        for (const warning of result.warnings) io.err(`  warning: ${warning.message}\n`);
      }
    }
    const unchecked = skipped.filter((item) => item.level !== 'info').length;
    for (const item of skipped) io.err(`${item.level === 'info' ? 'note' : 'error'}: ${item.message}\n`);
    if (!values.json) {
      const invalid = results.filter((result) => !result.valid).length;
      const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
      // A summary when folders were searched: the reader did not name each skill checked.
      const summary = valid ? io.out : io.err;
      if (searched) summary(`${plural(results.length, 'skill')} checked: ${results.length - invalid} valid, ${invalid} invalid\n`);
      if (skipped.length) summary(`${plural(skipped.length, 'folder')} skipped${unchecked ? ` (${unchecked} may hold skills that were not checked)` : ''}\n`);
    }
    return valid ? 0 : 1;
  },
};
