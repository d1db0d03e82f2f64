import { withDeadline } from '../waiting/with-deadline';
import type { MultiLockHandle } from '../multi/multi-lock-handle';
import type { LockHandle } from './lock-grant';

/** Critical sections running in using() / hold(): close() lets them finish (drainMs). */
export class CriticalSections {
  private readonly sections = new Set<Promise<unknown>>();

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
    if (this.sections.size > 0 && drainMs > 0) {
      const settled = Promise.allSettled([...this.sections]);
      await withDeadline(settled, drainMs);
    }
  }
}
