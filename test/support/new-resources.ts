import { createHook, executionAsyncId } from 'node:async_hooks';
import { waitUntil } from './wait';

/** What a leak check follows: timers and TCP sockets and servers. */
const TRACKED = new Set(['Timeout', 'TCPWRAP', 'TCPSERVERWRAP']);

/** Resources created while a tracker was on and still alive. */
export interface NewResources {
  /** The types of those still alive, e.g. `['Timeout', 'TCPWRAP']`; empty when all are gone. */
  alive(): string[];
  /**
   * Waits (up to 10 s: sockets close asynchronously) until none is alive, stops following, and returns
   * the types still alive: `expect(await created.ended()).toEqual([])`.
   */
  ended(): Promise<string[]>;
  /** Stops following new resources. */
  stop(): void;
}

/**
 * Follows, by identity, every timer and TCP handle created from now on by the caller's async context
 * and what descends from it (callbacks, promises, timers of timers).
 *
 * A count of the process' resources (`process.getActiveResourcesInfo()`) before and after mixes
 * in what already existed: a timer of the harness that ends meanwhile makes the counts differ
 * with nothing leaked, or hides a leaked one. This follows only what is created after the call.
 * A timer counts as gone once it fired or was cleared (`_destroyed`, set at once; the destroy
 * hook comes a moment later); a handle once it closed.
 */
export function trackNewResources(): NewResources {
  const live = new Map<number, { type: string; resource: object }>();
  // Only what descends from the caller's async context: a Jest worker runs spec files one after the
  // other in one process, and an earlier file's engines or clients may still be winding down.
  const family = new Set<number>([executionAsyncId()]);
  const hook = createHook({
    init(asyncId, type, trigger, resource) {
      if (!family.has(trigger) && !family.has(executionAsyncId())) return;
      family.add(asyncId);
      if (TRACKED.has(type)) live.set(asyncId, { type, resource });
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  const alive = (): string[] =>
    [...live.values()]
      .filter(
        ({ type, resource }) => type !== 'Timeout' || !(resource as { _destroyed?: boolean })._destroyed,
      )
      .map(({ type }) => type)
      .sort();
  const stop = (): void => {
    hook.disable();
  };
  const ended = async (): Promise<string[]> => {
    try {
      await waitUntil(() => alive().length === 0, { description: 'the followed timers and sockets to end' });
    } catch {
      // returned below: the caller's assertion shows what is left
    } finally {
      stop();
    }
    return alive();
  };
  return { alive, ended, stop };
}
