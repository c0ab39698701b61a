/** The code skills bundled with skillstate. Document skills (SKILL.md folders) sit beside them. */
export { arithmetic, add, subtract, multiply, divide } from './arithmetic.js';
export { counter, counterState, increment, decrement, reset, getCount } from './counter.js';
export { calculator, calculatorState, calculatorAdd, calculatorSubtract, calculatorMultiply } from './calculator.js';
