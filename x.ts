import { setup, createActor, fromCallback, enqueueActions, assign, sendTo } from 'xstate';
const crashy = fromCallback(({ receive }) => { receive((e) => { if (e.type === 'crash') throw new Error('boom'); }); });
const life = setup({ types: {} as { context: { gen: number } }, actors: { crashy } }).createMachine({
  context: { gen: 0 },
  entry: enqueueActions(({ enqueue }) => { enqueue.spawnChild('crashy', { id: 'c1', systemId: 'sys-c1' }); }),
  on: {
    'xstate.error.actor.*': { actions: enqueueActions(({ enqueue, event, context }) => { console.log('restart after', event.type); enqueue.stopChild('c1'); enqueue.spawnChild('crashy', { id: 'c1', systemId: 'sys-c1' }); enqueue.assign({ gen: context.gen + 1 }); }) },
    crash: { actions: sendTo(({ system }) => system.get('sys-c1'), { type: 'crash' }) },
  },
});
const a = createActor(life); a.subscribe({ error: (e) => console.log('root error', e) }); a.start();
a.send({ type: 'crash' } as any); a.send({ type: 'crash' } as any);
console.log(a.getSnapshot().status, a.getSnapshot().context, (a.getSnapshot().children as any).c1.getSnapshot().status, a.system.get('sys-c1')?.getSnapshot().status);
// cross-system sendTo
const target = createActor(setup({}).createMachine({ on: { ping: { actions: () => console.log('target got ping') } } })).start();
const src = createActor(setup({}).createMachine({ on: { go: { actions: sendTo(() => target, { type: 'ping' }) } } })).start();
src.send({ type: 'go' });
