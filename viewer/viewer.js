// The local viewer: reads the inspection stream (the Stately inspector's messages) from the
// server that serves this page, and shows the tree of agents and their skill lifecycle actors,
// each machine as a state diagram (drawn by Mermaid from the machine's own definition, current
// state highlighted), and the event log with filters by agent and skill.
// It must never reach past the server it came from.

/* global mermaid */
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'neutral', flowchart: { htmlLabels: false }, state: { htmlLabels: false } });

/** @type {Map<string, {sessionId: string, name: string, parentId?: string, app?: {id: string, label: string, pid?: number}, definition: any, value: any, status: string, card?: HTMLElement, item?: HTMLElement, drawn?: string}>} */
const actors = new Map();
/** The applications streaming to the server, by id: each one's actors are kept apart and labelled. */
const apps = new Map();
const tree = document.getElementById('tree');
const machines = document.getElementById('machines');
const log = document.getElementById('log');
const agentFilter = document.getElementById('filter-agent');
const skillFilter = document.getElementById('filter-skill');
const MAX_LOG = 5000;

fetch('config.json').then((response) => response.json()).then((config) => {
  document.getElementById('title').textContent = config.title;
  document.title = `${config.title}: skillstate viewer`;
});

// ---- who is who ------------------------------------------------------------------------------

function rootOf(actor) {
  let current = actor;
  while (current.parentId && actors.has(current.parentId)) current = actors.get(current.parentId);
  return current;
}

/** The application an actor belongs to, as the tree, the cards and the log name it: `label (pid N)`. */
function appOf(actor) {
  const app = rootOf(actor).app ?? actor.app;
  if (!app) return '';
  return app.pid === undefined ? app.label : `${app.label} (pid ${app.pid})`;
}

function skillOf(actor) {
  for (let current = actor; current; current = current.parentId ? actors.get(current.parentId) : undefined) {
    if (current.name.startsWith('skill:')) return current.name.slice('skill:'.length);
  }
  return '';
}

/** A state value as text: `active`, `stepping.hooks`, or `a.b, c.d` for parallel states. */
function stateText(value) {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  const parts = Object.entries(value).map(([key, inner]) => {
    const rest = stateText(inner);
    return rest ? `${key}.${rest}` : key;
  });
  return parts.join(', ');
}

// ---- diagrams --------------------------------------------------------------------------------

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
function diagramText(definition, value, fallbackName) {
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

function hasStates(definition) {
  return Boolean(definition && definition.states && Object.keys(definition.states).length);
}

let drawing = Promise.resolve();
let drawCount = 0;

function draw(actor) {
  const text = diagramText(actor.definition, actor.value, actor.name);
  if (text === actor.drawn) return;
  actor.drawn = text;
  drawing = drawing.then(async () => {
    if (actor.drawn !== text) return; // a newer state was queued meanwhile
    try {
      const { svg } = await mermaid.render(`diagram-${++drawCount}`, text);
      if (actor.drawn !== text) return;
      const box = actor.card.querySelector('.diagram');
      box.innerHTML = svg;
      box.dataset.kind = hasStates(actor.definition) ? 'states' : 'single';
      box.dataset.state = stateText(actor.value);
    } catch (error) {
      actor.card.querySelector('.diagram').textContent = `could not draw: ${error && error.message ? error.message : error}`;
    }
  });
}

// ---- the tree and the cards ------------------------------------------------------------------

function ensureViews(actor) {
  if (!actor.item) {
    actor.item = document.createElement('li');
    actor.item.dataset.session = actor.sessionId;
    actor.item.innerHTML = '<span class="actor-name"></span> <span class="app"></span> <span class="state"></span><ul></ul>';
    actor.card = document.createElement('article');
    actor.card.className = 'machine';
    actor.card.dataset.session = actor.sessionId;
    actor.card.innerHTML = '<h3><span class="actor-name"></span><span class="owner"></span><span class="app"></span><span class="state"></span></h3><div class="diagram"></div>';
  }
  const parent = actor.parentId && actors.get(actor.parentId);
  const list = parent ? (ensureViews(parent), parent.item.querySelector('ul')) : tree;
  if (actor.item.parentElement !== list) list.append(actor.item);
  // Cards are grouped by agent (of one application), in the order the agents appeared.
  const group = groupOf(rootOf(actor));
  if (actor.card.parentElement !== group) group.append(actor.card);
  actor.item.querySelector('.actor-name').textContent = actor.name;
  actor.card.querySelector('.actor-name').textContent = actor.name;
  const root = rootOf(actor);
  actor.card.querySelector('.owner').textContent = root === actor ? '' : `of ${root.name}`;
  // Which application: on agents in the tree and on every card.
  actor.item.querySelector('.app').textContent = root === actor ? appOf(actor) : '';
  actor.card.querySelector('.app').textContent = appOf(actor);
  actor.card.dataset.app = appOf(actor);
  actor.card.dataset.name = actor.name;
  actor.card.dataset.agent = root.name;
  actor.card.dataset.skill = skillOf(actor);
  offer(agentFilter, root.name);
  if (skillOf(actor)) offer(skillFilter, skillOf(actor));
}

function groupOf(root) {
  const key = `${root.app?.id ?? ''}/${root.name}`;
  let group = [...machines.children].find((element) => element.dataset.group === key);
  if (!group) {
    group = document.createElement('div');
    group.className = 'agent-group';
    group.dataset.group = key;
    group.dataset.agent = root.name;
    machines.append(group);
  }
  return group;
}

function refresh(actor) {
  ensureViews(actor);
  const text = stateText(actor.value) || actor.status;
  actor.item.querySelector('.state').textContent = text;
  actor.card.querySelector('.state').textContent = text;
  actor.card.dataset.state = stateText(actor.value);
  actor.card.dataset.status = actor.status;
  actor.item.classList.toggle('stopped', actor.status !== 'active');
  applyFilter(actor.card);
  draw(actor);
}

function offer(select, value) {
  if ([...select.options].some((option) => option.value === value)) return;
  const option = document.createElement('option');
  option.value = option.textContent = value;
  select.append(option);
}

function applyFilter(element) {
  const agent = agentFilter.value;
  const skill = skillFilter.value;
  element.hidden = (agent !== '' && element.dataset.agent !== agent) || (skill !== '' && element.dataset.skill !== skill);
}

for (const select of [agentFilter, skillFilter]) {
  select.addEventListener('change', () => {
    for (const element of [...machines.querySelectorAll('.machine'), ...log.children]) applyFilter(element);
  });
}

// ---- the event log ---------------------------------------------------------------------------

function detailOf(event) {
  if (event.signal && typeof event.signal === 'object') return `${event.signal.type ?? ''} ${event.signal.data === undefined ? '' : JSON.stringify(event.signal.data)}`.trim();
  const { type, ...rest } = event;
  const text = Object.keys(rest).length ? JSON.stringify(rest) : '';
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function logEvent(message) {
  const event = message.event ?? { type: '?' };
  const actor = actors.get(message.sessionId);
  const root = actor ? rootOf(actor) : undefined;
  const item = document.createElement('li');
  item.dataset.agent = root ? root.name : '';
  item.dataset.app = actor ? appOf(actor) : '';
  item.dataset.skill = actor ? skillOf(actor) || (typeof event.skill === 'string' ? event.skill : '') : '';
  item.dataset.type = event.type;
  const time = new Date(Number(message.createdAt) || Date.now());
  item.innerHTML = '<time></time><span><span class="who"></span> <span class="type"></span></span><span class="detail"></span>';
  item.querySelector('time').textContent = time.toISOString().slice(11, 23);
  const who = actor ? (actor === root ? actor.name : `${root.name} › ${actor.name}`) : message.sessionId;
  // With several applications streaming, each line says whose it is.
  item.querySelector('.who').textContent = apps.size > 1 && actor ? `[${appOf(actor)}] ${who}` : who;
  item.querySelector('.type').textContent = event.type;
  item.querySelector('.detail').textContent = detailOf(event);
  applyFilter(item);
  log.append(item);
  while (log.children.length > MAX_LOG) log.firstElementChild.remove();
  const pane = log.parentElement;
  if (pane.scrollHeight - pane.scrollTop - pane.clientHeight < 80) pane.scrollTop = pane.scrollHeight;
}

// ---- the stream ------------------------------------------------------------------------------

function parseDefinition(text) {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function receive(message) {
  if (!message || typeof message.sessionId !== 'string') return;
  if (message.type === '@xstate.actor') {
    const known = actors.get(message.sessionId);
    const actor = known ?? { sessionId: message.sessionId };
    actor.name = message.name ?? message.sessionId;
    actor.parentId = message.parentId;
    actor.definition = parseDefinition(message.definition) ?? actor.definition;
    if (message.app && typeof message.app.id === 'string') {
      actor.app = message.app;
      apps.set(message.app.id, message.app);
    }
    actor.value = message.snapshot?.value ?? actor.value;
    actor.status = message.snapshot?.status ?? 'active';
    actors.set(message.sessionId, actor);
    refresh(actor);
    // Children that arrived before their parent move under it now.
    for (const other of actors.values()) if (other.parentId === actor.sessionId && other.item) ensureViews(other);
  } else if (message.type === '@xstate.snapshot') {
    const actor = actors.get(message.sessionId);
    if (!actor) return;
    if (message.snapshot && 'value' in message.snapshot) actor.value = message.snapshot.value;
    if (message.snapshot?.status) actor.status = message.snapshot.status;
    refresh(actor);
  } else if (message.type === '@xstate.event') {
    logEvent(message);
  }
}

const connection = document.getElementById('connection');
function connect() {
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`);
  socket.addEventListener('open', () => {
    // The server replays what it kept to every new connection: the log starts again from it.
    log.replaceChildren();
    connection.dataset.status = 'live';
    connection.textContent = 'live';
  });
  socket.addEventListener('message', (event) => {
    try {
      receive(JSON.parse(event.data));
    } catch (error) {
      console.error('skillstate viewer: unreadable message', error);
    }
  });
  socket.addEventListener('close', () => {
    connection.dataset.status = 'closed';
    connection.textContent = 'disconnected, retrying';
    setTimeout(connect, 2000);
  });
}
connect();
