/**
 * `Promise.withResolvers` for Node 20: the Restate SDK calls it on every invocation, and without
 * it each invocation fails and is retried forever. Imported before the SDK; never replaces a
 * native implementation.
 */
interface WithResolvers {
  withResolvers?: <T>() => { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void };
}

const promiseClass = Promise as unknown as WithResolvers;
if (typeof promiseClass.withResolvers !== 'function') {
  promiseClass.withResolvers = <T>() => {
    let resolve!: (value: T | PromiseLike<T>) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    return { promise, resolve, reject };
  };
}

export {};
