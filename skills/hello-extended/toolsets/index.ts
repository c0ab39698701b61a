/**
 * The hello-extended toolset: one tool in the plain tool shape (`description`,
 * `parameters`, `execute`) and one skillstate action, exported together as `HelloToolset`.
 * skillstate imports this file when the skill is activated and registers both as its actions.
 */
import { z } from 'zod';
import { defineAction } from 'skillstate';

/** A tool in the plain tool shape: skillstate adapts it into an action named `say_hello`. */
export const sayHello = {
  name: 'say_hello',
  description: 'Greet a person by name',
  parameters: z.object({
    name: z.string().min(1).describe('Who to greet'),
    style: z.enum(['plain', 'excited']).default('plain').describe('How enthusiastic the greeting is'),
  }),
  execute: async (args: { name: string; style: 'plain' | 'excited' }) => ({
    title: 'Greeted',
    metadata: { style: args.style },
    output: args.style === 'excited' ? `Hello, ${args.name}!!` : `Hello, ${args.name}.`,
  }),
};

/** A skillstate action, used as it is. */
export const wave = defineAction({
  name: 'wave',
  description: 'Wave at a person, once or several times',
  input: z.object({ name: z.string().min(1), times: z.number().int().min(1).max(5).default(1) }),
  run: ({ name, times }) => ({ output: `${'👋'.repeat(times)} ${name}` }),
});

export const HelloToolset = [sayHello, wave];
