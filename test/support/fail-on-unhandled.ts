/*
 * Loaded by jest.config.js (setupFilesAfterEnv) in every test file: any unhandled promise
 * rejection or uncaught exception fails the next afterEach (so the test during or just after
 * which it happened) or, failing that, the whole file (afterAll).
 *
 * Listeners go on the host process (see host-process.ts): Jest's sandboxed `process` never
 * emits these events. They are added in beforeAll, because jest-circus swaps out every
 * listener present when the run starts, and removed in afterAll so nothing leaks between files.
 * Jest runs afterAll hooks of one block in declaration order, so a test file's own *top-level*
 * afterAll hooks run after this guard is gone; errors there are still failed by jest-circus.
 */
import { hostProcess } from './host-process';

/** One recorded failure. */
export interface UnhandledError {
  kind: 'unhandledRejection' | 'uncaughtException';
  error: unknown;
}

const recorded = new Map<object, UnhandledError>();
let nextId = 0;

const onRejection = (reason: unknown, promise: Promise<unknown>): void => {
  recorded.set(promise, { kind: 'unhandledRejection', error: reason });
};
const onRejectionHandled = (promise: Promise<unknown>): void => {
  recorded.delete(promise);
};
const onException = (error: unknown): void => {
  recorded.set({ id: nextId++ }, { kind: 'uncaughtException', error });
};

/** Removes and returns what was recorded so far (for tests that provoke one on purpose). */
export function takeUnhandledErrors(): UnhandledError[] {
  const errors = [...recorded.values()];
  recorded.clear();
  return errors;
}

/** True while this file's listeners are attached to the host process. */
export function failOnUnhandledInstalled(): boolean {
  return hostProcess.listeners('unhandledRejection').includes(onRejection as never);
}

function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}

function throwIfRecorded(when: string): void {
  const errors = takeUnhandledErrors();
  if (errors.length === 0) return;
  const list = errors.map((e, i) => `${i + 1}. ${e.kind}: ${describeError(e.error)}`).join('\n');
  throw new Error(`${errors.length} unhandled error(s) ${when}:\n${list}`);
}

beforeAll(() => {
  hostProcess.on('unhandledRejection', onRejection);
  hostProcess.on('rejectionHandled', onRejectionHandled);
  hostProcess.on('uncaughtException', onException);
});

afterEach(() => {
  throwIfRecorded('during or just before this test');
});

afterAll(async () => {
  // Let rejections from the last hooks surface before the listeners go.
  await new Promise((resolve) => setImmediate(resolve));
  hostProcess.off('unhandledRejection', onRejection);
  hostProcess.off('rejectionHandled', onRejectionHandled);
  hostProcess.off('uncaughtException', onException);
  throwIfRecorded('in this test file outside a test (hooks or late callbacks)');
});
