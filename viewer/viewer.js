// The local viewer: reads the inspection stream (the Stately inspector's messages) from the
// server that serves this page, and shows the tree of agents and their skill lifecycle actors,
// the selected agent's state, conversation and steps (agent-panel.js), each machine as a state
// diagram (diagram.js: drawn by Mermaid from the machine's own definition, current state
// highlighted), and the event log with filters by agent and skill.
// It must never reach past the server it came from.

/* global mermaid */
import { render as renderAgent, resetCursor } from './agent-panel.js';
import { diagramText, hasStates } from './diagram.js';
import { agentStatus } from './status.js';
import { command, configure, showTools } from './steer.js';
import { StepLog } from './steps.js';

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
/** The system actor runs the agents; it is not one, so it is neither listed nor drawn. Its events name the agent they are about. */
const SYSTEM = 'skillstate.system';
const steps = new StepLog();
/** The agent shown in full (its session id). */
let selected;

const configured = fetch('config.json')
  .then((response) => response.json())
  .then((config) => {
    document.getElementById('title').textContent = config.title;
    document.title = `${config.title}: skillstate viewer`;
    configure(config);
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
      fit(box, actor);
      box.dataset.kind = hasStates(actor.definition) ? 'states' : 'single';
      box.dataset.state = stateText(actor.value);
    } catch (error) {
      actor.card.querySelector('.diagram').textContent = `could not draw: ${error && error.message ? error.message : error}`;
    }
  });
}

/** Mermaid draws state names at 16 px: no diagram is shrunk below this, so that they stay at 12 px or more. */
const SMALLEST = 0.75;

/**
 * Diagrams are drawn at the card's zoom; until the zoom is chosen, as large as the pane allows
 * between 75% and 100% of Mermaid's size. Never smaller: a wide machine scrolls inside its card,
 * or its card is expanded to the pane.
 */
function fit(box, actor) {
  const svg = box.querySelector('svg');
  if (!svg) return;
  const view = svg.viewBox && svg.viewBox.baseVal;
  const width = view && view.width ? view.width : svg.getBoundingClientRect().width;
  const room = machines.clientWidth - 24;
  const zoom = actor.zoom ?? Math.max(SMALLEST, Math.min(1, room / width));
  svg.removeAttribute('width');
  svg.style.maxWidth = 'none';
  svg.style.width = `${Math.round(width * zoom)}px`;
  svg.style.height = 'auto';
  box.dataset.zoom = String(Math.round(zoom * 100) / 100);
}

const ZOOMS = [SMALLEST, 1, 1.25, 1.5, 2];

function zoomControls(actor) {
  const controls = document.createElement('span');
  controls.className = 'zoom';
  const button = (text, title, act) => {
    const element = document.createElement('button');
    element.textContent = text;
    element.title = title;
    element.className = title.split(' ')[0];
    element.addEventListener('click', (event) => {
      event.stopPropagation();
      act();
      fit(actor.card.querySelector('.diagram'), actor);
    });
    return element;
  };
  const step = (by) => () => {
    const now = Number(actor.card.querySelector('.diagram').dataset.zoom) || 1;
    const index = by > 0 ? ZOOMS.findIndex((zoom) => zoom > now) : ZOOMS.findLastIndex((zoom) => zoom < now);
    actor.zoom = index < 0 ? now : ZOOMS[index];
    actor.card.dataset.zoom = String(actor.zoom);
  };
  controls.append(
    button('−', 'smaller diagram', step(-1)),
    button('+', 'larger diagram', step(1)),
    button('⤢', 'expand to the pane', () => actor.card.classList.toggle('expanded')),
  );
  return controls;
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
    actor.card.innerHTML = '<h3><span class="actor-name"></span><span class="owner"></span><span class="app"></span><span class="state"></span><span class="folded"></span></h3><div class="diagram"></div>';
    actor.card.querySelector('h3').append(zoomControls(actor));
    actor.item.querySelector('.actor-name').addEventListener('click', () => select(rootOf(actor)));
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

/**
 * An actor that ran and ended under another (a step's async call), or that another of its name
 * replaced under the same parent (a child restarted after a crash, whose end the stream may not
 * report): folded into its parent's count.
 */
function finished(actor) {
  if (actor.parentId === undefined || actor.name.startsWith('skill:') || !actors.has(actor.parentId)) return false;
  return actor.status !== 'active' || actor.replaced === true;
}

/** How many finished children an actor has, by name: `step ×6`. */
function foldedText(parent) {
  const counts = new Map();
  for (const other of actors.values()) if (other.parentId === parent.sessionId && other.folded) counts.set(other.name, (counts.get(other.name) ?? 0) + 1);
  return [...counts].map(([name, count]) => `${name} ×${count}`).join(', ');
}

function refresh(actor) {
  if (actor.system) return;
  ensureViews(actor);
  const root = rootOf(actor);
  // A stopped (or passivated) agent's skills and children are stopped with it, whatever state they were left in.
  const own = agentStatus(actor.status, actor === root ? actor.described : undefined);
  const agent = agentStatus(root.status, root.described);
  const stopped = !own.running || !agent.running;
  // Its agent's word first: the skills of a passivated agent stopped because it was passivated.
  const word = agent.running ? own.status : agent.status;
  const state = stateText(actor.value);
  // An agent passivated by the runtime ends in its machine's own `passivated` state: said once.
  const text = stopped ? `${word}${state && state !== word ? ` (was ${state})` : ''}` : state || actor.status;
  actor.item.querySelector('.state').textContent = text;
  actor.card.querySelector('.state').textContent = text;
  actor.card.dataset.state = state;
  actor.card.dataset.status = stopped ? word : actor.status;
  actor.item.dataset.status = actor.card.dataset.status;
  actor.item.classList.toggle('stopped', stopped);
  actor.card.classList.toggle('stopped', stopped);
  actor.folded = finished(actor);
  actor.item.hidden = actor.folded;
  actor.card.dataset.folded = String(actor.folded);
  const parent = actor.parentId && actors.get(actor.parentId);
  if (parent && parent.item) {
    const folded = foldedText(parent);
    parent.item.dataset.folded = folded;
    parent.card.querySelector('.folded').textContent = folded ? `finished: ${folded}` : '';
  }
  applyFilter(actor.card);
  if (!actor.folded) draw(actor);
  if (root === actor && (selected === undefined || selected === actor.sessionId)) select(actor, false);
  if (root !== actor && root.status !== 'active' && !stopped) refresh(root);
}

/** Asks the agent's application what the agent can do (its actions, routes), and shows it with the controls steering allows. */
function describe(agent) {
  configured.then(() => showTools(agent.app?.id, agent.name)).then((described) => learn(agent.app?.id, described));
}

/** The agent named `name` of application `app` that the stream told of last (an agent restored or woken is a new actor). */
function latestAgent(app, name) {
  let found;
  for (const actor of actors.values()) if (!actor.parentId && !actor.system && actor.name === name && actor.app?.id === app) found = actor;
  return found;
}

/**
 * What the application said of its agents' statuses: an agent whose actor stopped may have been
 * stopped or passivated, which only the application knows. Kept on the agent, shown as its badge.
 */
function learn(app, described) {
  for (const one of described ?? []) {
    const agent = latestAgent(app, one.id);
    if (!agent || agent.described === one.status) continue;
    agent.described = one.status;
    for (const actor of actors.values()) if (rootOf(actor) === agent) refresh(actor);
  }
}

/** The applications asked for their agents' statuses: `true` while an answer is awaited, `'again'` when more agents stopped meanwhile. */
const asking = new Map();

/**
 * An agent's actor stopped: its application is asked whether it was stopped or passivated (and
 * the agent shown loses its controls). One question at a time per application: many agents
 * stopping together (a shutdown) make one more, not one each.
 */
function askStatus(agent) {
  if (agent.sessionId === selected) return describe(agent);
  const app = agent.app?.id;
  if (!app) return;
  if (asking.has(app)) return void asking.set(app, 'again');
  asking.set(app, true);
  command(app, { op: 'describe' }).then((answer) => {
    if (answer.ok) learn(app, answer.value);
    const again = asking.get(app) === 'again';
    asking.delete(app);
    if (again) askStatus(agent);
  });
}

/** Events after which what an agent can do is asked again. */
const RESHAPING = new Set(['mount', 'unmount', 'step.reconcile', 'agent.stopped', 'xstate.stop']);

/** Shows `agent` in the agent pane (the first agent seen is shown until another is clicked). */
function select(agent, byUser = true) {
  if (agent.system) return;
  if (byUser && selected !== agent.sessionId) resetCursor();
  const changed = selected !== agent.sessionId;
  selected = agent.sessionId;
  if (changed) describe(agent);
  for (const other of actors.values()) if (other.item) other.item.classList.toggle('selected', other.sessionId === selected);
  renderAgent(agent, steps.steps(agent.sessionId));
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
  element.hidden = element.dataset.folded === 'true' || (agent !== '' && element.dataset.agent !== agent) || (skill !== '' && element.dataset.skill !== skill);
}

for (const select of [agentFilter, skillFilter]) {
  select.addEventListener('change', () => {
    for (const element of [...machines.querySelectorAll('.machine'), ...log.children]) applyFilter(element);
  });
}

// ---- the event log ---------------------------------------------------------------------------

/** An error as a person reads it: `code: message` (or the message of a thrown `Error`). */
function errorText(error) {
  if (!error || typeof error !== 'object') return undefined;
  if (typeof error.message !== 'string') return undefined;
  return typeof error.code === 'string' ? `${error.code}: ${error.message}` : `${error.name ?? 'Error'}: ${error.message}`;
}

function detailOf(event) {
  if (event.signal && typeof event.signal === 'object') return `${event.signal.type ?? ''} ${event.signal.data === undefined ? '' : JSON.stringify(event.signal.data)}`.trim();
  const error = errorText(event.effect?.error) ?? errorText(event.error) ?? errorText(event.data);
  if (error) return error;
  const { type, agent, ...rest } = event;
  const text = Object.keys(rest).length ? JSON.stringify(rest) : '';
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** The agent of the same application that a system event names (`event.agent`). */
function agentNamed(system, name) {
  if (typeof name !== 'string') return undefined;
  for (const actor of actors.values()) if (!actor.parentId && actor.name === name && !actor.system && actor.app?.id === system.app?.id) return actor;
  return undefined;
}

function logEvent(message) {
  const event = message.event ?? { type: '?' };
  let actor = actors.get(message.sessionId);
  // The system reports effects (errors, registrations...) of its agents: each is the agent's.
  if (actor && actor.system) {
    const agent = agentNamed(actor, event.agent);
    if (agent) {
      steps.effect(agent.sessionId, event.effect && typeof event.effect === 'object' ? event.effect : { type: event.type });
      actor = agent;
    }
  } else if (actor && !actor.parentId) {
    steps.event(actor.sessionId, event, Number(message.createdAt) || Date.now());
    if (actor.sessionId === selected) {
      select(actor, false);
      if (RESHAPING.has(event.type)) describe(actor);
    }
  }
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
  if (message && message.type === '@skillstate.delta') return streamed(message);
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
    actor.system = actor.name === SYSTEM && !actor.parentId;
    actors.set(message.sessionId, actor);
    lifecycle(actor, !known);
    refresh(actor);
    if (!known && actor.parentId) {
      for (const other of actors.values()) {
        if (other !== actor && other.parentId === actor.parentId && other.name === actor.name && !other.replaced) {
          other.replaced = true;
          refresh(other);
        }
      }
    }
    // Children that arrived before their parent move under it now.
    for (const other of actors.values()) if (other.parentId === actor.sessionId && other.item) ensureViews(other);
  } else if (message.type === '@xstate.snapshot') {
    const actor = actors.get(message.sessionId);
    if (!actor) return;
    const was = actor.status;
    if (message.snapshot && 'value' in message.snapshot) actor.value = message.snapshot.value;
    if (message.snapshot?.status) actor.status = message.snapshot.status;
    if (!actor.parentId && !actor.system && message.snapshot && 'context' in message.snapshot) {
      steps.snapshot(actor.sessionId, message);
      // A skill loaded before it is mounted lands after the mount event: what the agent can do is asked again when it does.
      const mounted = mountedNames(message.snapshot);
      if (mounted !== undefined && actor.mounted !== undefined && mounted !== actor.mounted && actor.sessionId === selected) describe(actor);
      actor.mounted = mounted ?? actor.mounted;
    }
    if (message.snapshot && 'value' in message.snapshot) lifecycle(actor);
    refresh(actor);
    if (!actor.parentId && !actor.system && was === 'active' && actor.status !== 'active') askStatus(actor);
  } else if (message.type === '@xstate.event') {
    logEvent(message);
  }
}

/** The names of the skills an agent's snapshot says are mounted, as one string (undefined when redacted). */
function mountedNames(snapshot) {
  const mounted = snapshot?.context?.agent?.mounted;
  return Array.isArray(mounted) ? mounted.map((skill) => skill?.name).join(',') : undefined;
}

/** A skill's lifecycle actor started or moved: its agent's steps know (a trace tells an agent's skills by them). */
function lifecycle(actor, created = false) {
  const agent = actor.parentId && actors.get(actor.parentId);
  const state = stateText(actor.value);
  if (!agent || agent.parentId || agent.system || !actor.name.startsWith('skill:') || !state) return;
  if (steps.lifecycle(agent.sessionId, actor.name.slice('skill:'.length), state, created) && agent.sessionId === selected) select(agent, false);
}

/** A piece of a model's answer as it is written: kept on the agent until its turn's step lands. */
function streamed(message) {
  const agent = [...actors.values()].find((actor) => !actor.parentId && actor.name === message.agent && actor.app?.id === message.app?.id);
  if (!agent) return;
  if (agent.streaming?.turn !== message.turn || agent.streaming?.step !== message.step) agent.streaming = { turn: message.turn, step: message.step, text: '' };
  agent.streaming.text += message.text;
  if (agent.sessionId === selected) select(agent, false);
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
