// The selected agent, in full: its state skill by skill (what the step shown changed marked), its
// mounted skills with their config, its conversation when it is model-driven, and time travel
// through its recorded steps — back, forward, to the latest (following live), to the step where
// an error happened — each step with its signal, its effects and its diff.

import { conversationOf, conversationView } from './conversation.js';
import { part } from './dom.js';
import { shortJson, stateTree } from './state.js';
import { agentStatus } from './status.js';

const panel = document.getElementById('agent');
const $ = (selector) => panel.querySelector(selector);

/** Which step is shown: `undefined` follows the latest as steps arrive. */
let cursor;
let shown; // { actor, steps }

function at(steps) {
  if (!steps.length) return -1;
  return cursor === undefined ? steps.length - 1 : Math.min(cursor, steps.length - 1);
}

function go(index) {
  if (!shown) return;
  const last = shown.steps.length - 1;
  cursor = index >= last ? undefined : Math.max(0, index);
  render(shown.actor, shown.steps);
}

$('#step-back').addEventListener('click', () => shown && go(at(shown.steps) - 1));
$('#step-forward').addEventListener('click', () => shown && go(at(shown.steps) + 1));
$('#step-latest').addEventListener('click', () => go(Number.MAX_SAFE_INTEGER));
$('#step-error').addEventListener('click', () => {
  if (!shown) return;
  const here = at(shown.steps);
  // The next error after the step shown, or else the first one.
  const errors = shown.steps.map((step, index) => (step.error ? index : -1)).filter((index) => index >= 0);
  const next = errors.find((index) => index > here) ?? errors[0];
  if (next !== undefined) go(next);
});

/** Back to following the latest step (another agent was selected). */
export function resetCursor() {
  cursor = undefined;
}

function line(text, className = '') {
  const item = document.createElement('li');
  item.className = className;
  item.textContent = text;
  return item;
}

function effectText(effect) {
  if (effect.type === 'error' && effect.error && typeof effect.error === 'object') return `error ${effect.error.code}: ${effect.error.message}`;
  const { type, meta, ...rest } = effect;
  const skill = meta && typeof meta === 'object' && meta.skill ? ` [${meta.skill}]` : '';
  const detail = Object.keys(rest).length ? ` ${shortJson(rest, 160)}` : '';
  return `${type}${skill}${detail}`;
}

function stepView(step) {
  const box = part('Step', 'step');
  box.dataset.n = String(step.n);
  const facts = document.createElement('ul');
  facts.className = 'facts';
  const trigger = step.trigger.type === 'signal' && step.signal ? `signal ${step.signal.type}` : step.trigger.skill ? `${step.trigger.type} ${step.trigger.skill}` : step.trigger.subject ? `${step.trigger.type} ${step.trigger.subject}` : step.trigger.type;
  facts.append(line(trigger, 'trigger'));
  if (step.signal && step.signal.data !== undefined) facts.append(line(`data ${shortJson(step.signal.data, 300)}`, 'signal-data'));
  if (step.value !== undefined) facts.append(line(`machine ${typeof step.value === 'string' ? step.value : JSON.stringify(step.value)}`, 'machine-state'));
  if (step.error) facts.append(line(`${step.error.code}: ${step.error.message}`, 'error'));
  box.append(facts);
  const effects = document.createElement('ul');
  effects.className = 'effects';
  for (const effect of step.effects) effects.append(line(effectText(effect), effect.type === 'error' ? 'error' : ''));
  if (!step.effects.length) effects.append(line('no effects', 'none'));
  box.append(effects);
  const diff = document.createElement('ul');
  diff.className = 'diff';
  for (const change of step.changes) diff.append(line(`${change.path}: ${shortJson(change.before, 80)} → ${shortJson(change.after, 80)}`));
  if (!step.recorded) diff.append(line('the trace records no state', 'none'));
  else if (!step.changes.length) diff.append(line('state unchanged', 'none'));
  box.append(diff);
  return box;
}

/**
 * The skills mounted after the step shown (`[redacted]` as the stream sent it): live, each with its
 * config; from a trace, which records no config, each with its lifecycle state.
 */
function skillsView(known) {
  const box = part('Skills', 'skills');
  const list = document.createElement('ul');
  const mounted = Array.isArray(known) ? known : [];
  for (const skill of mounted) {
    const config = skill.config && Object.keys(skill.config).length ? ` ${shortJson(skill.config, 160)}` : '';
    const item = line(`${skill.name}${config}${skill.lifecycle ? ` — ${skill.lifecycle}` : ''}`);
    item.dataset.skill = skill.name;
    list.append(item);
  }
  if (!mounted.length) list.append(line(typeof known === 'string' ? known : 'none known', 'none'));
  box.append(list);
  return box;
}

/** Shows `actor` (an agent) at the step the cursor is on. */
export function render(actor, steps) {
  shown = { actor, steps };
  panel.hidden = false;
  panel.dataset.agent = actor.name;
  const status = agentStatus(actor.status, actor.described);
  panel.dataset.status = status.status;
  $('.agent-name').textContent = actor.name;
  // Running, or a badge that says why not: stopped, passivated...
  $('.agent-status').textContent = status.running ? 'running' : status.status;
  $('.agent-status').classList.toggle('badge', !status.running);
  const index = at(steps);
  const step = steps[index];
  panel.dataset.step = step ? String(step.n) : '0';
  panel.dataset.following = String(cursor === undefined);
  $('#step-at').textContent = step ? `step ${step.n} of ${steps.at(-1).n}${cursor === undefined ? ' (latest)' : ''}` : 'no steps yet';
  $('#step-back').disabled = index <= 0;
  $('#step-forward').disabled = index < 0 || index >= steps.length - 1;
  $('#step-latest').disabled = cursor === undefined;
  $('#step-error').disabled = !steps.some((one) => one.error);
  const body = $('.agent-body');
  const parts = [];
  if (step) parts.push(stepView(step));
  const state = step ? step.state : undefined;
  const stateBox = part('State', 'state-part');
  if (typeof state === 'string') stateBox.append(Object.assign(document.createElement('p'), { className: 'redacted', textContent: state }));
  else if (state && typeof state === 'object') stateBox.append(stateTree(state, new Set(step.changes.map((change) => change.path))));
  else stateBox.append(Object.assign(document.createElement('p'), { className: 'none', textContent: step && !step.recorded ? 'not recorded in a trace' : 'not known yet' }));
  parts.push(stateBox);
  const conversation = conversationOf(state);
  if (conversation) {
    const box = part('Conversation', 'conversation-part');
    box.append(conversationView(conversation, actor.streaming));
    parts.push(box);
  }
  parts.push(skillsView(step?.mounted));
  body.replaceChildren(...parts);
}
