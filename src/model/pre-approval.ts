/**
 * Pre-approval: while a trusted document skill is active on an agent, the tools its
 * `allowed-tools` names are pre-approved — a call that would wait for a person's approval
 * (`needsApproval`) runs without asking, and its record names the skill. Nothing else changes: a
 * tool the list leaves out, and every action and route of the agent, behave as without the
 * skill. An untrusted skill pre-approves nothing.
 *
 * Entries are matched against the names the model sees. A specifier is applied where skillstate
 * knows the tool's arguments: `run_skill_script(<pattern>)` covers the skill's own scripts whose
 * name or path (as the call gives it) matches the pattern (`*` within a path segment, `**` across
 * them). Any other specifier (`Bash(git:*)` on an application's own `Bash`) pre-approves nothing,
 * and so does an entry that names no tool of the agent: each gets a diagnostic naming the skill
 * and the entry (the same for every agent with the same tools; a host reports it for each agent).
 *
 * Pure: no I/O.
 */
import { catalogOf, type Agent } from '../core/agent-value.js';
import type { Catalog } from '../core/catalog.js';
import { diagnostic, type Diagnostic } from '../core/diagnostics.js';
import { isPlainObject } from '../core/plain.js';
import type { Toolset } from '../core/toolset.js';
import { skillToolsRegistry } from '../manifest/skill-tools.js';
import { documentMetadata } from '../manifest/spec.js';
import { globMatcher } from './glob.js';

/** One tool a skill pre-approves: an `allowed-tools` entry matched to a tool the model is offered. */
export interface PreApproval {
  skill: string;
  entry: string;
  /** Which calls of the tool the entry's specifier covers (none: every call). */
  covers?: (args: unknown) => boolean;
}

/** What the active skills of an agent pre-approve, by tool name, and the entries that pre-approve nothing. */
export interface PreApprovals {
  readonly byTool: ReadonlyMap<string, readonly PreApproval[]>;
  /** `allowed_tool_unknown` and `allowed_tool_specifier` warnings. */
  readonly diagnostics: readonly Diagnostic[];
}

/** The tool that takes a specifier: a script pattern. */
const SCRIPT_TOOL = 'run_skill_script';

/** What the active skills of `agent` pre-approve among the tools of `toolset` (the agent's, or of one with the same skills). */
export function preApprovalsOf(agent: Agent<object> | undefined, toolset: Toolset): PreApprovals {
  const byTool = new Map<string, PreApproval[]>();
  const diagnostics: Diagnostic[] = [];
  const catalog = catalogOf(agent);
  if (!agent || !catalog) return { byTool, diagnostics };
  const names = toolset.tools.map((tool) => tool.function.name);
  for (const active of catalog.skills.values()) {
    const document = documentMetadata(active.spec);
    // Trust is the gate (an untrusted skill's entries were reported when it was loaded).
    if (!document?.trusted) continue;
    const skill = active.spec.name;
    for (const { entry, tool, specifier } of document.preApproves) {
      const named = globMatcher(tool, 'name');
      const matched = names.filter(named);
      const note = (code: string, why: string) =>
        diagnostics.push(diagnostic('warning', code, `skill '${skill}' pre-approves '${entry}', but ${why}; the entry pre-approves nothing`, { skill, subject: entry }));
      if (!matched.length) {
        note('allowed_tool_unknown', `the agent has no tool ${tool.includes('*') ? 'matching' : 'named'} '${tool}' (its tools: ${names.join(', ') || 'none'})`);
        continue;
      }
      for (const name of matched) {
        const covers = specifier === undefined ? undefined : scriptsCovered(catalog, toolset, name, skill, specifier);
        if (covers === null) {
          note('allowed_tool_specifier', `skillstate cannot apply '(${specifier})' to tool '${name}' (only ${SCRIPT_TOOL} takes a specifier: a pattern of the skill's own scripts)`);
          continue;
        }
        const grant: PreApproval = covers ? { skill, entry, covers } : { skill, entry };
        const grants = byTool.get(name);
        if (grants) grants.push(grant);
        else byTool.set(name, [grant]);
      }
    }
  }
  return { byTool, diagnostics };
}

/** The skill that pre-approves this call of `tool` (the first active one, in mount order), or undefined. */
export function preApprovedBy(approvals: PreApprovals, tool: string, args: unknown): string | undefined {
  return approvals.byTool.get(tool)?.find((grant) => grant.covers === undefined || grant.covers(args))?.skill;
}

/**
 * Which calls of `tool` a specifier covers, when `tool` is the script tool of skill tools: the
 * calls running a script of `skill` itself whose name or relative path matches the pattern.
 * Null when skillstate does not know how to apply a specifier to `tool`.
 */
function scriptsCovered(catalog: Catalog, toolset: Toolset, tool: string, skill: string, specifier: string): ((args: unknown) => boolean) | null {
  const binding = toolset.bindings.get(tool);
  const owner = binding?.skill === undefined ? undefined : catalog.skills.get(binding.skill)?.spec;
  if (binding?.action !== SCRIPT_TOOL || owner === undefined || skillToolsRegistry(owner) === undefined) return null;
  const covered = globMatcher(specifier, 'path');
  return (args) => {
    if (!isPlainObject(args) || args.skill !== skill || typeof args.script !== 'string') return false;
    const script = relativeScript(args.script);
    return script !== undefined && covered(script);
  };
}

/** A script as a relative path without `.` segments; undefined for an absolute path or one that climbs out with `..`. */
function relativeScript(script: string): string | undefined {
  if (script.startsWith('/') || script.includes('\\')) return undefined;
  const parts = script.split('/').filter((part) => part !== '' && part !== '.');
  return parts.length === 0 || parts.includes('..') ? undefined : parts.join('/');
}
