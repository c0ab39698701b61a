/**
 * The arithmetic skill (the canonical example): add, subtract, multiply and divide,
 * with division by zero reported as a clean `division_by_zero` failure. It keeps no state.
 * Signals `arithmetic.<op>` are routed to the action of that name, and an
 * `arithmetic.calculate` signal carrying `{ op, a, b }` is turned into a `run` effect by
 * `handleSignal`.
 */
import { z } from 'zod';
import { Decision, Effects, defineAction, defineSkill, fail } from '../src/index.js';

const operands = z.object({
  a: z.number().describe('The first operand'),
  b: z.number().describe('The second operand'),
});
const output = z.object({ result: z.number() });

/** Adds two numbers (an action of `arithmetic`). */
export const add = defineAction({
  name: 'add',
  description: 'Add two numbers (a + b)',
  input: operands,
  output,
  run: ({ a, b }) => ({ result: a + b }),
});

/** Subtracts two numbers (an action of `arithmetic`). */
export const subtract = defineAction({
  name: 'subtract',
  description: 'Subtract two numbers (a - b)',
  input: operands,
  output,
  run: ({ a, b }) => ({ result: a - b }),
});

/** Multiplies two numbers (an action of `arithmetic`). */
export const multiply = defineAction({
  name: 'multiply',
  description: 'Multiply two numbers (a * b)',
  input: operands,
  output,
  run: ({ a, b }) => ({ result: a * b }),
});

/** Divides two numbers, failing on division by zero (an action of `arithmetic`). */
export const divide = defineAction({
  name: 'divide',
  description: 'Divide two numbers (a / b); b must not be 0',
  input: operands,
  output,
  run: ({ a, b }) => (b === 0 ? fail('division_by_zero', 'cannot divide by zero') : { result: a / b }),
});

const OPERATIONS = new Set(['add', 'subtract', 'multiply', 'divide']);

/** The arithmetic skill: add, subtract, multiply and divide. */
export const arithmetic = defineSkill({
  name: 'arithmetic',
  description: 'Basic arithmetic operations: add, subtract, multiply, divide.',
  category: 'math',
  vsn: '1.0.0',
  tags: ['math', 'arithmetic', 'numeric'],
  actions: [add, subtract, multiply, divide],
  signalPatterns: ['arithmetic.calculate'],
  routes: [
    { path: 'arithmetic.add', target: { action: 'add' } },
    { path: 'arithmetic.subtract', target: { action: 'subtract' } },
    { path: 'arithmetic.multiply', target: { action: 'multiply' } },
    { path: 'arithmetic.divide', target: { action: 'divide' } },
  ],
  instructions: [
    'The Arithmetic skill provides tools for basic numeric operations:',
    '',
    '- add(a, b): returns a + b',
    '- subtract(a, b): returns a - b',
    '- multiply(a, b): returns a * b',
    '- divide(a, b): returns a / b (b must not be 0)',
    '',
    'Use these tools whenever you need to compute numeric results.',
    'Prefer exact arithmetic over approximate reasoning.',
  ].join('\n'),
  handleSignal(signal) {
    if (signal.type !== 'arithmetic.calculate') return Decision.continue();
    const data = (signal.data ?? {}) as { op?: unknown; a?: unknown; b?: unknown };
    if (typeof data.op !== 'string' || !OPERATIONS.has(data.op)) {
      return Decision.fail(`unknown operation '${String(data.op)}'; expected one of ${[...OPERATIONS].join(', ')}`);
    }
    return Decision.handle({ effects: [Effects.run(data.op, { a: data.a, b: data.b }, { skill: 'arithmetic' })] });
  },
});
