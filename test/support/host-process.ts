import * as vm from 'vm';

/**
 * The real Node `process` object.
 *
 * Inside Jest, the global `process` is a sandboxed copy: listeners added to it for `exit`,
 * `unhandledRejection` or `uncaughtException` never fire. Evaluating `process` in the host
 * context returns the object Node actually emits on. Outside Jest it is just `process`.
 */
export const hostProcess: NodeJS.Process = vm.runInThisContext('process') as NodeJS.Process;

/** A value shared by every Jest module registry in this OS process (created once by `init`). */
export function processSingleton<T>(name: string, init: () => T): T {
  const key = Symbol.for(`nestjs-distributed-lock.test.${name}`);
  const bag = hostProcess as unknown as Record<symbol, T | undefined>;
  let value = bag[key];
  if (value === undefined) {
    value = init();
    bag[key] = value;
  }
  return value;
}
