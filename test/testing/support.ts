/** What the model-testing tests import: the public API of skillstate and skillstate/testing. */
export { createSignal, defineAction, defineAgent, defineSkill, Decision, result } from '../../src/index.js';
export { createAgentTestModel, ModelCheckFailure, ModelViolation, type ModelStep, type ReferenceModel } from '../../src/testing/index.js';
