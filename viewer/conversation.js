// A model-driven agent's conversation, read from its state (the `conversation` slice): the
// messages in order, each tool call with its input and its output or error, the tool calls of the
// turn in flight (those waiting for approval said so), how the last turn ended, the tokens used.

import { shortJson } from './state.js';

/** The conversation slice of an agent's state, when it has one. */
export function conversationOf(state) {
  const slice = state && typeof state === 'object' ? state.conversation : undefined;
  return slice && typeof slice === 'object' && Array.isArray(slice.messages) ? slice : undefined;
}

function row(className, who, text) {
  const item = document.createElement('li');
  item.className = className;
  const role = document.createElement('span');
  role.className = 'role';
  role.textContent = who;
  const body = document.createElement('span');
  body.className = 'body';
  body.textContent = text;
  item.append(role, body);
  return item;
}

/** Tool results by call id, so each call is shown with what it gave back. */
function resultsOf(messages) {
  const results = new Map();
  for (const message of messages) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content) if (part && part.type === 'tool-result') results.set(part.toolCallId, part);
  }
  return results;
}

/** What a tool result says: its value, or why it failed (`error-text`, `error-json`, `execution-denied`). */
function resultText(part) {
  const output = part.output;
  if (output && typeof output === 'object' && typeof output.type === 'string') {
    if (output.type === 'execution-denied') return { failed: true, text: `denied${output.reason ? `: ${output.reason}` : ''}` };
    if (output.type === 'error-text') return { failed: true, text: String(output.value) };
    if (output.type.startsWith('error')) return { failed: true, text: shortJson(output.value, 300) };
    return { failed: false, text: output.type === 'text' ? String(output.value) : shortJson(output.value, 300) };
  }
  return { failed: false, text: shortJson(output, 300) };
}

/** True when the history's last assistant message is the text streamed (its step landed). */
function landed(messages, text) {
  const last = [...messages].reverse().find((message) => message.role === 'assistant');
  if (!last) return false;
  const written = typeof last.content === 'string' ? last.content : Array.isArray(last.content) ? last.content.filter((part) => part.type === 'text').map((part) => part.text).join('') : '';
  return written === text;
}

/**
 * The conversation as a list: messages, tool calls with their results, pending calls, the answer
 * being written (`streaming`: the pieces received for the turn in flight); and its usage.
 */
export function conversationView(slice, streaming) {
  const list = document.createElement('ol');
  list.className = 'conversation';
  const results = resultsOf(slice.messages);
  for (const message of slice.messages) {
    if (message.role === 'tool') continue; // shown with the call it answers
    const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : Array.isArray(message.content) ? message.content : [];
    for (const part of parts) {
      if (part.type === 'text' && part.text) list.append(row(`message ${message.role}`, message.role, part.text));
      else if (part.type === 'tool-call') {
        const call = row('tool-call', 'tool', `${part.toolName}(${shortJson(part.input ?? part.args, 300)})`);
        call.dataset.tool = part.toolName;
        const result = results.get(part.toolCallId);
        if (result) {
          const { failed, text } = resultText(result);
          const answer = document.createElement('span');
          answer.className = failed ? 'result failed' : 'result';
          answer.textContent = `→ ${text}`;
          call.append(answer);
          if (failed) call.classList.add('failed');
        }
        list.append(call);
      }
    }
  }
  for (const call of slice.turn?.pending ?? []) {
    const waiting = call.approval === 'needed';
    const item = row(waiting ? 'tool-call pending approval' : 'tool-call pending', waiting ? 'approve?' : 'next', `${call.tool}(${shortJson(call.args, 300)})`);
    item.dataset.tool = call.tool;
    // With steering on, the page answers the approval itself (steer.js carries the click out).
    if (waiting && document.body.dataset.steering === 'on') {
      for (const [text, className] of [['Approve', 'approve'], ['Deny', 'deny']]) {
        const answer = document.createElement('button');
        answer.type = 'button';
        answer.className = className;
        answer.textContent = text;
        answer.dataset.call = call.toolCallId;
        item.append(answer);
      }
    }
    list.append(item);
  }
  if (slice.turn && streaming && streaming.turn === slice.turn.n && streaming.text && !landed(slice.messages, streaming.text)) list.append(row('message assistant streaming', 'assistant…', streaming.text));
  if (slice.turn) list.append(row('turn', 'turn', `${slice.turn.n}: ${slice.turn.status}`));
  else if (slice.last && slice.last.outcome !== 'answered') list.append(row('turn failed', 'turn', `${slice.last.n} ${slice.last.outcome}${slice.last.error ? `: ${slice.last.error.code}: ${slice.last.error.message}` : ''}`));
  const usage = document.createElement('p');
  usage.className = 'usage';
  const tokens = slice.usage ?? {};
  usage.textContent = `tokens: ${tokens.inputTokens ?? 0} in, ${tokens.outputTokens ?? 0} out, ${tokens.totalTokens ?? 0} total`;
  const box = document.createElement('div');
  box.append(list, usage);
  return box;
}
