/**
 * The calculator skill: arithmetic that rounds to a precision kept in its
 * state, refuses results above a configured maximum, and remembers the last result. Signals
 * `calculator.*` reach it: `handleSignal` records the operation named by the signal type, the
 * routes send `calculator.add` / `.subtract` / `.multiply` to the actions, and
 * `transformResult` answers a call with a `calculator.result` signal.
 */
import { z } from 'zod';
import { Decision, createSignal, defineAction, defineSkill, fail, result } from '../src/index.js';

/** The calculator's state schema. */
export const calculatorState = z.object({
  precision: z.number().int().min(0).max(12).default(2),
  last_result: z.number().default(0),
});

const operands = z.object({ a: z.number(), b: z.number() });

type CalculatorConfig = { max_value: number };

function compute(name: string, description: string, op: (a: number, b: number) => number) {
  return defineAction({
    name,
    description,
    input: operands,
    state: calculatorState,
    run: ({ a, b }, { skillState, config }) => {
      const { max_value } = config as CalculatorConfig;
      const factor = 10 ** skillState.precision;
      const value = Math.round(op(a, b) * factor) / factor;
      if (Math.abs(value) > max_value) {
        return fail('result_too_large', `result ${value} exceeds max_value ${max_value}`, { value, max_value });
      }
      return result({ result: value }, { state: { last_result: value } });
    },
  });
}

/** Adds two numbers, rounded (an action of `calculator`). */
export const calculatorAdd = compute('add', 'Add two numbers, rounded to the precision', (a, b) => a + b);
/** Subtracts two numbers, rounded (an action of `calculator`). */
export const calculatorSubtract = compute('subtract', 'Subtract b from a, rounded to the precision', (a, b) => a - b);
/** Multiplies two numbers, rounded (an action of `calculator`). */
export const calculatorMultiply = compute('multiply', 'Multiply two numbers, rounded to the precision', (a, b) => a * b);

/** The calculator skill: arithmetic rounded to a precision kept in its state. */
export const calculator = defineSkill({
  name: 'calculator',
  description: 'Basic arithmetic operations',
  category: 'math',
  vsn: '0.1.0',
  tags: ['math', 'utility'],
  schema: calculatorState,
  configSchema: z.object({ max_value: z.number().int().positive().default(1_000_000) }),
  signalPatterns: ['calculator.*'],
  actions: [calculatorAdd, calculatorSubtract, calculatorMultiply],
  routes: [
    { path: 'calculator.add', target: { action: 'add' } },
    { path: 'calculator.subtract', target: { action: 'subtract' } },
    { path: 'calculator.multiply', target: { action: 'multiply' } },
  ],
  handleSignal(signal) {
    const operation = signal.type.split('.').at(-1);
    if (signal.type === 'calculator.result') return Decision.continue();
    const data = typeof signal.data === 'object' && signal.data !== null ? signal.data : {};
    return Decision.rewrite({ ...signal, data: { ...data, operation } });
  },
  transformResult(signal, value) {
    return createSignal('calculator.result', value, { source: signal.source });
  },
});
