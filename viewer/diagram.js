// A machine as a Mermaid state diagram: drawn from the machine's own definition (its config as
// JSON), every state declared, transitions by event, `after`, `always`, `onDone` and invocations,
// the active states (and their parents) in the `current` class.

function label(text) {
  return String(text).replace(/["\n;]/g, ' ').replace(/:/g, '∶');
}

function transitionsOf(node) {
  const found = [];
  const add = (event, spec) => {
    for (const one of Array.isArray(spec) ? spec : [spec]) {
      const target = typeof one === 'string' ? one : one && one.target;
      for (const t of Array.isArray(target) ? target : target === undefined ? [] : [target]) found.push([event, t]);
    }
  };
  for (const [event, spec] of Object.entries(node.on ?? {})) add(event, spec);
  if (node.always) add('always', node.always);
  if (node.onDone) add('done', node.onDone);
  for (const [delay, spec] of Object.entries(node.after ?? {})) add(`after ${delay}`, spec);
  for (const invoke of Array.isArray(node.invoke) ? node.invoke : node.invoke ? [node.invoke] : []) {
    if (invoke.onDone) add(`done ${invoke.id ?? invoke.src ?? ''}`, invoke.onDone);
    if (invoke.onError) add(`error ${invoke.id ?? invoke.src ?? ''}`, invoke.onError);
  }
  return found;
}

/** Paths of the active states, as `a.b` strings. */
function activePaths(value, prefix = []) {
  if (typeof value === 'string') return [[...prefix, value].join('.')];
  if (!value || typeof value !== 'object') return [];
  const paths = [];
  for (const [key, inner] of Object.entries(value)) {
    paths.push([...prefix, key].join('.'));
    paths.push(...activePaths(inner, [...prefix, key]));
  }
  return paths;
}

/** The machine as a Mermaid state diagram, with the active states in the `current` class. */
export function diagramText(definition, value, fallbackName) {
  const lines = ['stateDiagram-v2', 'direction LR', 'classDef current fill:#ffe08a,stroke:#c77700,stroke-width:3px,color:#000'];
  const ids = new Map();
  const byMachineId = new Map();
  const idOf = (path) => {
    const key = path.join('.');
    if (!ids.has(key)) ids.set(key, `s${ids.size}`);
    return ids.get(key);
  };
  const collect = (node, path) => {
    for (const [name, child] of Object.entries(node.states ?? {})) {
      if (child && typeof child.id === 'string') byMachineId.set(child.id, [...path, name]);
      collect(child ?? {}, [...path, name]);
    }
  };
  const resolve = (parentPath, statePath, target) => {
    if (typeof target !== 'string') return undefined;
    if (target.startsWith('#')) {
      const [id, ...rest] = target.slice(1).split('.');
      const base = byMachineId.get(id);
      return base ? [...base, ...rest] : undefined;
    }
    if (target.startsWith('.')) return [...statePath, ...target.slice(1).split('.')];
    return [...parentPath, ...target.split('.')];
  };
  const walk = (node, path, indent) => {
    const states = node.states ?? {};
    const names = Object.keys(states);
    if (node.initial && states[node.initial]) lines.push(`${indent}[*] --> ${idOf([...path, node.initial])}`);
    for (const name of names) {
      const child = states[name] ?? {};
      const id = idOf([...path, name]);
      lines.push(`${indent}state "${label(name)}" as ${id}`);
      if (child.states && Object.keys(child.states).length) {
        lines.push(`${indent}state ${id} {`);
        walk(child, [...path, name], `${indent}  `);
        lines.push(`${indent}}`);
      }
      if (child.type === 'final') lines.push(`${indent}${id} --> [*]`);
    }
    for (const name of names) {
      for (const [event, target] of transitionsOf(states[name] ?? {})) {
        const to = resolve(path, [...path, name], target);
        if (to && ids.has(to.join('.'))) lines.push(`${indent}${idOf([...path, name])} --> ${idOf(to)} : ${label(event)}`);
      }
    }
  };
  const config = definition && typeof definition === 'object' ? definition : {};
  if (typeof config.id === 'string') byMachineId.set(config.id, []);
  collect(config, []);
  if (config.states && Object.keys(config.states).length) {
    // Declare every state first, so that transitions between nested states find their ids.
    walk(config, [], '  ');
    const current = activePaths(value).filter((path) => ids.has(path)).map((path) => ids.get(path));
    if (current.length) lines.push(`  class ${current.join(',')} current`);
  } else {
    // A machine without states (plain actor logic, or a flat machine) is one box, always current.
    lines.push(`  state "${label(config.id ?? fallbackName)}" as s0`, '  class s0 current');
  }
  return lines.join('\n');
}

export function hasStates(definition) {
  return Boolean(definition && definition.states && Object.keys(definition.states).length);
}
