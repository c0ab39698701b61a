// The selected agent's tools: what it can do (each action with its input schema, its routes) and,
// when the server and the application allow steering and the page holds the session token, the
// controls that do it — an action's form, a signal to send or call, a chat message, approve or
// deny a tool call, cancel a turn, mount and unmount skills, stop the agent. Every request
// carries the token; each answer, or its typed error, is shown where it was asked.

import { part } from './dom.js';
import { schemaForm } from './schema-form.js';
import { steerable } from './status.js';

/** The session token, from the address the inspector printed (`#token=...`): never sent anywhere but this server. */
const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
let interactive = false;
const tools = document.querySelector('#agent .agent-tools');

/** Steering is offered when the server allows it and the page holds the token. */
export function configure(config) {
  interactive = config.interactive === true && token !== '';
  document.body.dataset.steering = interactive ? 'on' : 'off';
}

/** Posts a command for application `app`; resolves with its answer (`{ ok, value }` or `{ ok: false, error }`). */
export async function command(app, body) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers['x-skillstate-token'] = token;
  try {
    const response = await fetch('steer', { method: 'POST', headers, body: JSON.stringify({ app, ...body }) });
    return await response.json();
  } catch (error) {
    return { ok: false, error: { code: 'unreachable', message: String(error && error.message ? error.message : error) } };
  }
}

function button(text, className, act) {
  const element = document.createElement('button');
  element.textContent = text;
  element.className = className;
  element.type = 'button';
  element.addEventListener('click', act);
  return element;
}

/** The last answer of each control of the agent shown: the tools are drawn again after a mount, the answers stay. */
const answers = new Map();

/** Where the answers of control `key` are shown: its value as JSON, or `code: message` marked as an error. */
function answerBox(key) {
  const box = document.createElement('pre');
  box.className = 'answer';
  box.dataset.key = key;
  if (answers.has(key)) show(box, answers.get(key));
  return box;
}

function show(box, answer) {
  answers.set(box.dataset.key, answer);
  box.dataset.ok = String(answer.ok);
  box.textContent = answer.ok ? JSON.stringify(answer.value ?? null, null, 1) : `${answer.error.code}: ${answer.error.message}`;
}

let current; // { app, agent }

function actionsPart(agent) {
  const box = part('Actions', 'actions');
  for (const action of agent.actions) {
    const item = document.createElement('details');
    item.className = 'action';
    item.dataset.action = action.skill ? `${action.skill}/${action.name}` : action.name;
    const summary = document.createElement('summary');
    summary.textContent = `${action.skill ? `${action.skill}/` : ''}${action.name}${action.description ? ` — ${action.description}` : ''}`;
    item.append(summary);
    const schema = document.createElement('code');
    schema.className = 'schema';
    schema.textContent = JSON.stringify(action.input);
    item.append(schema);
    if (interactive) {
      const form = schemaForm(action.input);
      const answer = answerBox(`action ${item.dataset.action}`);
      item.append(
        form.element,
        button('Run', 'run', async () => {
          let params;
          try {
            params = form.read();
          } catch (error) {
            show(answer, { ok: false, error: { code: 'invalid_params', message: error.message } });
            return;
          }
          show(answer, await command(current.app, { op: 'run', agent: agent.id, action: action.name, params, ...(action.skill ? { skill: action.skill } : {}) }));
        }),
        answer,
      );
    }
    box.append(item);
  }
  if (!agent.actions.length) box.append(Object.assign(document.createElement('p'), { className: 'none', textContent: 'no actions' }));
  return box;
}

function routesPart(agent) {
  const box = part('Routes', 'routes');
  const list = document.createElement('ul');
  for (const route of agent.routes) {
    const target = typeof route.target === 'object' && route.target ? `${route.target.skill ?? route.skill ?? ''}${route.target.skill || route.skill ? '/' : ''}${route.target.action}` : String(route.target);
    const item = document.createElement('li');
    item.textContent = `${route.path} → ${target}`;
    list.append(item);
  }
  box.append(list);
  return box;
}

function signalPart(agent) {
  const box = part('Signal', 'signal');
  const type = Object.assign(document.createElement('input'), { className: 'signal-type', placeholder: 'type, e.g. counter.increment' });
  const data = Object.assign(document.createElement('textarea'), { className: 'signal-data', placeholder: 'data (JSON, optional)', rows: 2 });
  const answer = answerBox('signal');
  const signal = () => {
    if (data.value.trim() === '') return { type: type.value.trim() };
    return { type: type.value.trim(), data: JSON.parse(data.value) };
  };
  const send = (op) => async () => {
    let built;
    try {
      built = signal();
    } catch {
      show(answer, { ok: false, error: { code: 'invalid_signal', message: 'the data is not JSON' } });
      return;
    }
    show(answer, await command(current.app, { op, agent: agent.id, signal: built }));
  };
  box.append(type, data, button('Call', 'call', send('call')), button('Send', 'send', send('send')), answer);
  return box;
}

function chatPart(agent) {
  const box = part('Chat', 'chat');
  const text = Object.assign(document.createElement('textarea'), { className: 'chat-text', placeholder: 'a message to the agent', rows: 2 });
  const answer = answerBox('chat');
  box.append(
    text,
    button('Send', 'chat-send', async () => {
      const message = text.value.trim();
      if (!message) return;
      text.value = '';
      // Sent, not called: the conversation above shows the turn as it goes, approvals included.
      show(answer, await command(current.app, { op: 'send', agent: agent.id, signal: { type: 'chat.message', data: { text: message } } }));
    }),
    button('Cancel turn', 'chat-cancel', async () => show(answer, await command(current.app, { op: 'send', agent: agent.id, signal: { type: 'chat.cancel', data: { reason: 'cancelled from the studio' } } }))),
    answer,
  );
  return box;
}

/** What may be mounted, each with where its name is found and its description (what a model is disclosed of a document skill). */
function mountableList(agent, mount) {
  const list = document.createElement('ul');
  list.className = 'mountable';
  for (const skill of agent.mountable) {
    const item = document.createElement('li');
    item.dataset.skill = skill.name;
    item.dataset.from = skill.from;
    const name = Object.assign(document.createElement('span'), { className: 'skill-name', textContent: skill.name });
    const from = Object.assign(document.createElement('span'), { className: 'from', textContent: skill.from });
    const description = Object.assign(document.createElement('p'), { className: 'description', textContent: skill.description });
    item.append(name, from, button('Mount', 'mount-one', () => mount(skill.name)), description);
    list.append(item);
  }
  if (!agent.mountable.length) list.append(Object.assign(document.createElement('li'), { className: 'none', textContent: 'nothing else known to mount' }));
  return list;
}

function lifePart(agent) {
  const box = part('Skills and life', 'life');
  const answer = answerBox('life');
  const mount = async (name) => show(answer, await command(current.app, { op: 'mount', agent: agent.id, skill: name }));
  const typed = Object.assign(document.createElement('input'), { className: 'mount-name', placeholder: 'or a skill name' });
  box.append(mountableList(agent, mount), typed, button('Mount', 'mount', () => mount(typed.value.trim())));
  for (const name of agent.mounted) {
    box.append(button(`Unmount ${name}`, 'unmount', async () => show(answer, await command(current.app, { op: 'unmount', agent: agent.id, skill: name }))));
  }
  box.append(button('Stop agent', 'stop-agent', async () => show(answer, await command(current.app, { op: 'stop', agent: agent.id }))), answer);
  return box;
}

/**
 * Shows the tools of agent `id` of application `app` (asked of the application: it knows its
 * actions); resolves with what the application said of all its agents (undefined if it did not answer).
 */
export async function showTools(app, id) {
  if (current?.app !== app || current?.agent !== id) answers.clear();
  current = { app, agent: id };
  if (!app) {
    tools.replaceChildren();
    return;
  }
  const answer = await command(app, { op: 'describe' });
  const described = answer.ok && Array.isArray(answer.value) ? answer.value : undefined;
  if (current.app !== app || current.agent !== id) return described; // another agent was selected meanwhile
  if (!answer.ok) {
    tools.replaceChildren(Object.assign(document.createElement('p'), { className: 'none', textContent: `actions unknown: ${answer.error.message}` }));
    return described;
  }
  const agent = described?.find((one) => one.id === id);
  if (!agent) {
    tools.replaceChildren();
    return described;
  }
  const parts = [actionsPart(agent), routesPart(agent)];
  // A stopped or passivated agent is shown, not steered.
  if (interactive && steerable(agent.status)) {
    if (agent.mounted.includes('conversation')) parts.unshift(chatPart(agent));
    parts.push(signalPart(agent), lifePart(agent));
  }
  tools.replaceChildren(...parts);
  return described;
}

// Approve and deny buttons are drawn on the tool calls waiting for approval (conversation.js).
document.getElementById('agent').addEventListener('click', async (event) => {
  const target = event.target;
  if (!(target instanceof HTMLButtonElement) || !target.dataset.call || !current) return;
  const type = target.classList.contains('approve') ? 'chat.approve' : 'chat.deny';
  target.disabled = true;
  const answer = await command(current.app, { op: 'send', agent: current.agent, signal: { type, data: { toolCallId: target.dataset.call } } });
  if (!answer.ok) target.title = `${answer.error.code}: ${answer.error.message}`;
});
