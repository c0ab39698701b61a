/**
 * `skillstate validate <dir...>`: strict validation of skill folders, in the Agent Skills
 * reference validator's words. A folder without a SKILL.md is searched for skill folders, each
 * validated and reported. Exit 0 when every skill is valid, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { validateSkillTree } from '../../manifest/validate-tree.js';
import { UsageError, type Command } from '../io.js';

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check skill folders strictly against the Agent Skills specification',
  help: `Usage: skillstate validate [--spec agentskills|skillstate] [--json] <dir...>

Validates each skill folder strictly: SKILL.md present, front matter opening the file and closed,
a YAML mapping, every field within the specification. Problems are reported in the words of the
Agent Skills reference validator (skills-ref). A folder that holds no SKILL.md is searched for
skill folders (hidden folders and node_modules left out, 4 levels deep) and each is validated.
Exit code 1 when any skill is invalid.

  --spec agentskills   accept only the standard fields
  --spec skillstate    also accept the extension fields: version, toolsets, scripts, triggers,
                       default_enabled, brief_description (default)
  --json               print the results as JSON`,
  async run(args, io) {
    const { values, positionals } = parseArgs({
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
    const results = [];
    let searched = false;
    for (const dir of positionals) {
      const found = await validateSkillTree(dir, { spec: values.spec });
      searched ||= found.length !== 1 || found[0]!.dir !== dir;
      results.push(...found);
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
      const invalid = results.filter((result) => !result.valid).length;
      // A summary when folders were searched: the reader did not name each skill checked.
      if (searched) (invalid ? io.err : io.out)(`${results.length} skills checked: ${results.length - invalid} valid, ${invalid} invalid\n`);
    }
    return results.every((result) => result.valid) ? 0 : 1;
  },
};
