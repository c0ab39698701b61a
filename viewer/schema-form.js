// A form generated from an action's input schema (JSON Schema, as zod writes it): a field per
// property — text, number, checkbox, a choice for an enum, JSON for anything nested — required
// ones marked. What it reads back is the action's params: empty optional fields left out.

function fieldFor(name, schema, required) {
  const label = document.createElement('label');
  label.className = 'field';
  label.dataset.field = name;
  const caption = document.createElement('span');
  caption.textContent = required ? `${name} *` : name;
  if (schema.description) caption.title = schema.description;
  label.append(caption);
  let input;
  const type = Array.isArray(schema.type) ? schema.type.find((one) => one !== 'null') : schema.type;
  if (Array.isArray(schema.enum)) {
    input = document.createElement('select');
    if (!required) input.append(new Option('', ''));
    for (const value of schema.enum) input.append(new Option(String(value), JSON.stringify(value)));
    input.dataset.kind = 'enum';
  } else if (type === 'boolean') {
    input = document.createElement('input');
    input.type = 'checkbox';
    input.dataset.kind = 'boolean';
  } else if (type === 'number' || type === 'integer') {
    input = document.createElement('input');
    input.type = 'number';
    input.step = type === 'integer' ? '1' : 'any';
    input.dataset.kind = 'number';
  } else if (type === 'string') {
    input = document.createElement('input');
    input.type = 'text';
    input.dataset.kind = 'string';
  } else {
    input = document.createElement('textarea');
    input.rows = 2;
    input.placeholder = 'JSON';
    input.dataset.kind = 'json';
  }
  input.name = name;
  if (schema.default !== undefined && input.dataset.kind !== 'boolean') input.placeholder = `default ${JSON.stringify(schema.default)}`;
  label.append(input);
  return { label, input };
}

/** The value a field holds, or `undefined` when it is empty; throws when its JSON does not parse. */
function valueOf(input) {
  switch (input.dataset.kind) {
    case 'boolean':
      return input.checked;
    case 'number':
      return input.value === '' ? undefined : Number(input.value);
    case 'enum':
      return input.value === '' ? undefined : JSON.parse(input.value);
    case 'string':
      return input.value === '' ? undefined : input.value;
    default:
      if (input.value.trim() === '') return undefined;
      try {
        return JSON.parse(input.value);
      } catch {
        throw new Error(`${input.name}: not JSON`);
      }
  }
}

/** The fields of `schema` (an object schema) in a form; `read()` gives the params they hold. */
export function schemaForm(schema) {
  const form = document.createElement('div');
  form.className = 'schema-form';
  const properties = schema && typeof schema === 'object' && schema.properties ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const inputs = [];
  for (const [name, property] of Object.entries(properties)) {
    const { label, input } = fieldFor(name, property ?? {}, required.has(name));
    inputs.push(input);
    form.append(label);
  }
  return {
    element: form,
    read() {
      const params = {};
      for (const input of inputs) {
        const value = valueOf(input);
        // An unticked optional checkbox says nothing.
        if (value === undefined || (value === false && !required.has(input.name))) continue;
        params[input.name] = value;
      }
      return params;
    },
  };
}
