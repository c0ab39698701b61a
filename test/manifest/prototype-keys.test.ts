/**
 * Keys named `__proto__`, `constructor` or `prototype` in front matter, at any depth (top level,
 * `metadata`, `triggers`, unknown fields, mappings inside lists), never change the prototype of
 * an object skillstate hands out and never reach `Object.prototype`: they are dropped, and a
 * warning names each one.
 */
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/index.js';
import { inspectSkillManifest, parseSkillManifest } from '../../src/manifest/index.js';
import { skillMd, tree } from './tree.js';

const HOSTILE = skillMd(`
name: hostile
description: Tries to reach prototypes.
__proto__: { polluted: top }
"constructor": { polluted: ctor }
prototype: { polluted: proto }
metadata:
  __proto__: { polluted: meta }
  constructor: Evil
  prototype: Evil
  author: Ada
triggers:
  __proto__: { keywords: [evil] }
  keywords: [pdf]
custom:
  nested:
    __proto__: { polluted: deep }
    kept: yes
  list:
    - { __proto__: { polluted: listed }, item: 1 }
`);

const DROPPED = ['__proto__', 'constructor', 'prototype', 'metadata.__proto__', 'metadata.constructor', 'metadata.prototype', 'triggers.__proto__', 'custom.nested.__proto__', 'custom.list[0].__proto__'];

/** Every object reachable from `value`, with its path. */
function objects(value: unknown, at = 'manifest', out: [string, object][] = []): [string, object][] {
  if (typeof value !== 'object' || value === null) return out;
  out.push([at, value]);
  for (const [key, child] of Object.entries(value)) objects(child, `${at}.${key}`, out);
  return out;
}

describe('prototype keys in front matter are dropped with a warning, at any depth', () => {
  it('no object handed out has a changed prototype, and Object.prototype is untouched', () => {
    const parsed = parseSkillManifest(HOSTILE, { file: 'hostile/SKILL.md' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    for (const [at, object] of [...objects(parsed.manifest), ...objects(parsed.data, 'data')]) {
      expect([Object.prototype, Array.prototype], at).toContain(Object.getPrototypeOf(object));
      expect(Object.hasOwn(object, '__proto__'), at).toBe(false);
      expect(Object.hasOwn(object, 'constructor'), at).toBe(false);
      expect(Object.hasOwn(object, 'prototype'), at).toBe(false);
    }
  });

  it('keeps every other key', () => {
    const { manifest } = parseSkillManifest(HOSTILE);
    expect(manifest.metadata).toEqual({ author: 'Ada' });
    expect(manifest.triggers.keywords).toEqual(['pdf']);
    expect(manifest.extra).toEqual({ custom: { nested: { kept: 'yes' }, list: [{ item: 1 }] } });
  });

  it('names each dropped key in a manifest_key_dropped warning, in lenient and strict mode', () => {
    for (const strict of [false, true]) {
      const report = inspectSkillManifest(HOSTILE, { file: 'hostile/SKILL.md', strict, dirName: 'hostile' });
      const dropped = report.diagnostics.filter((d) => d.code === 'manifest_key_dropped');
      expect(dropped.map((d) => d.details?.key)).toEqual(DROPPED);
      expect(dropped.every((d) => d.level === 'warning' && d.message.startsWith('hostile/SKILL.md: key '))).toBe(true);
    }
  });

  it('top-level ones still count as unexpected fields for strict validation, as the reference says', () => {
    // Written in block style: the reference refuses the flow style of HOSTILE before looking at any field.
    const block = skillMd('name: hostile\ndescription: x\n__proto__:\n  polluted: top\n"constructor":\n  polluted: ctor\nprototype:\n  polluted: proto\ncustom: x\ntriggers:\n  keywords:\n    - pdf');
    expect(inspectSkillManifest(HOSTILE, { strict: true, dirName: 'hostile', spec: 'agentskills' }).errors[0]).toMatch(/^Invalid YAML in frontmatter: While scanning\n {2}in "<unicode string>", line 4, column 12:/);
    const report = inspectSkillManifest(block, { strict: true, dirName: 'hostile', spec: 'agentskills' });
    expect(report.errors).toEqual([
      "Unexpected fields in frontmatter: __proto__, constructor, custom, prototype, triggers. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.",
    ]);
  });

  it('the same holds for skills found by discovery and activated', async () => {
    const root = await tree({ 'hostile/SKILL.md': HOSTILE });
    const registry = await discoverSkills({ bundled: false, extra: [root] });
    expect(registry.diagnostics.filter((d) => d.code === 'manifest_key_dropped')).toHaveLength(DROPPED.length);
    const { spec, entry } = await registry.activate('hostile');
    for (const [at, object] of [...objects(entry.manifest, 'entry'), ...objects(spec.metadata, 'spec.metadata')]) {
      expect([Object.prototype, Array.prototype], at).toContain(Object.getPrototypeOf(object));
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
