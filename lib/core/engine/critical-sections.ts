import { withDeadline } from '../runtime/with-deadline';
import type { MultiLockHandle } from '../multi/multi-lock-handle';
import type { LockHandle } from '../grant/grant-handle';
import type { Runtime } from '../runtime/runtime';

/** Critical sections running in using() / hold(): close() lets them finish (drainMs). */
export class CriticalSections {
  private readonly sections = new Set<Promise<unknown>>();

  constructor(private readonly runtime: Runtime) {}

  /**
   * Runs `fn` (through `run`, inside the critical section of `handle`) and releases it afterwards,
   * counting it as a running critical section until it settles.
   */
  async hold<T>(handle: LockHandle | MultiLockHandle, run: () => T | Promise<T>): Promise<T> {
    const section = (async () => {
      try {
        return await run();
      } finally {
        await handle.release();
      }
    })();
    this.sections.add(section);
    try {
      return await section;
    } finally {
      this.sections.delete(section);
    }
  }

  /** Waits for the running critical sections to finish, within `drainMs`. */
  async drain(drainMs: number): Promise<void> {
    if (drainMs <= 0) return;
    // A call granted just before close() enters its section a few microtasks later (using() and
    // decorated methods acquire, then hold): one turn of the event loop lets those in first.
    await this.runtime.nextTurn();
    if (this.sections.size === 0) return;
    await withDeadline(this.runtime, Promise.allSettled([...this.sections]), drainMs);
  }
}
