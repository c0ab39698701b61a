// An agent's state, skill by skill: plain JSON drawn as a tree of keys, and what one step changed
// (the paths whose value differs, with the value before and after). What the stream redacted is
// shown as it arrived: `[redacted]`, never guessed at.

/** Paths (`counter.count`, `list.items.2`) whose value differs between two plain JSON values. */
export function changes(before, after, path = []) {
  if (Object.is(before, after)) return [];
  const plainObject = (value) => value !== null && typeof value === 'object';
  if (!plainObject(before) || !plainObject(after) || Array.isArray(before) !== Array.isArray(after)) {
    return [{ path: path.join('.'), before, after }];
  }
  const found = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) found.push(...changes(before[key], after[key], [...path, key]));
  return found;
}

/** A value as one short line of JSON (long ones cut, so that a row stays a row). */
export function shortJson(value, max = 120) {
  const text = value === undefined ? '—' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The value as a tree: objects and arrays open as nested lists, leaves as `key: value`; each row
 * carries its path (`data-path`), and the rows of `changed` paths (and their parents) are marked.
 */
export function stateTree(value, changed = new Set(), path = []) {
  const list = document.createElement('ul');
  list.className = 'state-tree';
  for (const [key, inner] of Object.entries(value ?? {})) {
    const here = [...path, key].join('.');
    const row = document.createElement('li');
    row.dataset.path = here;
    const touched = [...changed].some((one) => one === here || one.startsWith(`${here}.`));
    if (touched) row.classList.add('changed');
    const name = document.createElement('span');
    name.className = 'key';
    name.textContent = key;
    row.append(name);
    if (inner !== null && typeof inner === 'object' && Object.keys(inner).length > 0) {
      const size = document.createElement('span');
      size.className = 'size';
      size.textContent = Array.isArray(inner) ? `[${inner.length}]` : `{${Object.keys(inner).length}}`;
      row.append(size, stateTree(inner, changed, [...path, key]));
    } else {
      const leaf = document.createElement('span');
      leaf.className = 'value';
      leaf.textContent = shortJson(inner, 400);
      row.append(leaf);
    }
    list.append(row);
  }
  return list;
}
