import type { LockKind } from './lock-kind';
import type { LockOptions } from '../options/lock-options';

/** The lock kinds a backend offers; a missing one is refused with a clear error. */
export interface LockKinds {
  mutex: LockKind;
  token: LockKind;
  readWrite?: LockKind;
  fair?: LockKind;
  semaphore?: LockKind;
}

/** Picks the kind that validated options ask for. */
export class KindRegistry {
  constructor(
    private readonly kinds: LockKinds,
    private readonly backendName: string,
  ) {}

  kindFor(opts: LockOptions): LockKind {
    if (opts.mode !== undefined) return this.need('readWrite', 'mode');
    if (opts.fair) return this.need('fair', 'fair');
    if (opts.limit !== undefined) return this.need('semaphore', 'limit');
    return opts.reentrant === false ? this.kinds.token : this.kinds.mutex;
  }

  private need(kind: keyof LockKinds, option: string): LockKind {
    const found = this.kinds[kind];
    if (!found) throw new TypeError(`The "${option}" option is not supported with ${this.backendName}`);
    return found;
  }
}
