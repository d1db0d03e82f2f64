import { withDeadline } from '../runtime/with-deadline';
import type { MultiLockHandle } from '../multi/multi-lock-handle';
import type { LockHandle } from '../grant/grant-handle';
import type { Runtime } from '../runtime/runtime';

/** Critical sections running in using() / hold(): close() lets them finish (drainMs). */
export class CriticalSections {
  /** Sections running now. */
  private running = 0;
  /** Resolves the drain waiting for the running sections, once the last one has released. */
  private idle?: () => void;

  constructor(private readonly runtime: Runtime) {}

  /**
   * Runs `fn` (through `run`, inside the critical section of `handle`) and releases it afterwards,
   * counting it as a running critical section until it settles. One promise chain, no async
   * functions: every decorated call runs through here, and two nested async functions and a Set of
   * their promises cost more than the count drain() needs.
   */
  hold<T>(handle: LockHandle | MultiLockHandle, run: () => T | Promise<T>): Promise<T> {
    this.running++;
    let result: Promise<T>;
    try {
      result = Promise.resolve(run());
    } catch (err) {
      result = Promise.reject(err);
    }
    return result.then(
      (value) => this.leave(handle).then(() => value),
      (err: unknown) =>
        this.leave(handle).then(() => {
          throw err;
        }),
    );
  }

  /** Waits for the running critical sections to finish, within `drainMs`. */
  async drain(drainMs: number): Promise<void> {
    if (drainMs <= 0) return;
    // A call granted just before close() enters its section a few microtasks later (using() and
    // decorated methods acquire, then hold): one turn of the event loop lets those in first.
    await this.runtime.nextTurn();
    if (this.running === 0) return;
    const finished = new Promise<void>((resolve) => (this.idle = resolve));
    await withDeadline(this.runtime, finished, drainMs);
    this.idle = undefined;
  }

  /** Releases the section's lock, then counts it as finished (a release never rejects: it resolves false). */
  private leave(handle: LockHandle | MultiLockHandle): Promise<void> {
    return handle.release().then(
      () => this.finished(),
      (err: unknown) => {
        this.finished();
        throw err;
      },
    );
  }

  private finished(): void {
    if (--this.running === 0) this.idle?.();
  }
}
