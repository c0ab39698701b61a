/**
 * `skillstate trust <skill|dir...>`: records project skills as trusted in the trust file (in the
 * user's home, by the folder's real path), so their toolsets are imported and their scripts run;
 * `--revoke` takes them out again and `--list` shows the file.
 *
 * I/O: discovery, and reading and writing the trust file.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { loadSkillFolder } from '../../manifest/folder.js';
import { defaultTrustFile, readTrustFile, revokeSkillFolders, trustSkillFolders } from '../../manifest/trust.js';
import { parseCommandArgs, UsageError, type Command } from '../io.js';
import { discoverFromFlags, SOURCE_HELP, SOURCE_OPTIONS } from '../sources.js';

export const trustCommand: Command = {
  name: 'trust',
  help: `Usage: skillstate trust [--revoke | --list] [sources] <skill|dir...>

Project skills (./.agent/skills) come with the repository they are in, so they are untrusted
until trusted: they are disclosed and readable, but their toolsets are not imported and their
scripts do not run. This command records skills as trusted in the trust file (in your home
folder, by the folder's real path). A skill is named as discovery finds it, or by its folder.

  --revoke   take the skills out of the trust file
  --list     print the trusted folders

${SOURCE_HELP}`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs({ args, allowPositionals: true, options: { ...SOURCE_OPTIONS, revoke: { type: 'boolean' }, list: { type: 'boolean' } } });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const file = values['trust-file'] ?? defaultTrustFile();
    if (values.list) {
      const { records, diagnostics } = await readTrustFile(file);
      for (const item of diagnostics) io.err(`warning: ${item.message}\n`);
      if (!records.length) io.out(`No trusted skills in ${file}.\n`);
      for (const record of records) io.out(`${record.name}  ${record.path}  (since ${record.trustedAt})\n`);
      return 0;
    }
    if (!positionals.length) throw new UsageError('trust needs at least one skill name or folder');
    const folders: { name: string; path: string }[] = [];
    let registry: Awaited<ReturnType<typeof discoverFromFlags>> | undefined;
    for (const given of positionals) {
      if (given.includes(path.sep) || given === '.' || (await stat(given).catch(() => undefined))?.isDirectory()) {
        const folder = await loadSkillFolder(given);
        folders.push({ name: folder.skill.name, path: path.resolve(given) });
        continue;
      }
      registry ??= await discoverFromFlags(values, io);
      const entry = registry.entry(given);
      if (!entry?.rootPath) {
        io.err(`skillstate trust: no skill folder named '${given}'; available: ${registry.names().join(', ') || '(none)'}\n`);
        return 1;
      }
      folders.push({ name: entry.name, path: entry.rootPath });
    }
    if (values.revoke) {
      const removed = await revokeSkillFolders(file, folders.map((folder) => folder.path));
      for (const folder of folders) io.out(`${removed.some((record) => record.name === folder.name) ? 'No longer trusted' : 'Was not trusted'}: ${folder.name} (${folder.path})\n`);
      return 0;
    }
    for (const record of await trustSkillFolders(file, folders)) io.out(`Trusted: ${record.name} (${record.path})\n`);
    io.out(`Written to ${file}\n`);
    return 0;
  },
};
