/**
 * Names every Redis key and channel of one lock. All of them carry the same hash tag, so on a
 * Cluster they live in one slot (no CROSSSLOT, one node for lock, fence and channel).
 *
 * The tag is the user key with `%`, `{` and `}` percent-encoded: the mapping stays one-to-one and
 * user text can never open or close a hash tag early (an empty tag `{}` would scatter the keys).
 */
export class KeySpace {
  constructor(readonly prefix: string) {}

  /** The hash-tagged stem shared by every key of `key`'s lock. */
  stem(key: string): string {
    return `${this.prefix}{${encodeTag(key)}}`;
  }

  /**
   * Names for one lock of the given kind. The kinds are separate namespaces: `m` (mutex and token
   * lock, which exclude each other), `rw`, `fair` and `sem` are four different locks on one key.
   */
  names(key: string, kind: LockKindTag = 'm'): LockKeyNames {
    const stem = this.stem(key);
    return {
      lock: `${stem}:${kind}`,
      // One fencing counter per lock: the mutex and token lock share `m` (they exclude each other),
      // every other kind is a lock of its own with its own counter, so a cohort's reserved tokens
      // never interleave with another kind's grants (docs/GUARANTEES.md, "One key, one lock per kind").
      fence: kind === 'm' ? `${stem}:fence` : `${stem}:fence:${kind}`,
      channel: `${stem}:${kind}:ch`,
      aux: `${stem}:${kind}:aux`,
    };
  }
}

/** Short tags of the lock kinds; part of each Redis key name. */
export type LockKindTag = 'm' | 'rw' | 'fair' | 'sem';

/** The Redis names one lock uses. `aux` is a second structure some kinds need (queue, permits). */
export interface LockKeyNames {
  lock: string;
  fence: string;
  channel: string;
  aux: string;
}

function encodeTag(key: string): string {
  return key.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}
