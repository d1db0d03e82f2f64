/**
 * Names every Redis key and channel of one lock. All of them carry the same hash tag, so on a
 * Cluster they live in one slot (no CROSSSLOT, one node for lock, fence and channel).
 *
 * The tag is the user key with `%`, `{` and `}` percent-encoded: the mapping stays one-to-one and
 * user text can never open or close a hash tag early (an empty tag `{}` would scatter the keys).
 */
export class KeySpace {
  /** Names already built, per kind tag: a hot key costs a map lookup, not four strings and a regex. */
  private readonly built = new Map<LockKindTag, Map<string, LockKeyNames>>();

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
    let cache = this.built.get(kind);
    if (!cache) this.built.set(kind, (cache = new Map()));
    let names = cache.get(key);
    if (!names) {
      // Bounded: a process that locks ever new keys keeps at most NAMES_KEPT of them per kind.
      if (cache.size >= NAMES_KEPT) cache.clear();
      cache.set(key, (names = this.build(key, kind)));
    }
    return names;
  }

  private build(key: string, kind: LockKindTag): LockKeyNames {
    const stem = this.stem(key);
    return Object.freeze({
      lock: `${stem}:${kind}`,
      // One fencing counter per lock: the mutex and token lock share `m` (they exclude each other),
      // every other kind is a lock of its own with its own counter, so a cohort's reserved tokens
      // never interleave with another kind's grants (docs/GUARANTEES.md, "One key, one lock per kind").
      fence: kind === 'm' ? `${stem}:fence` : `${stem}:fence:${kind}`,
      channel: `${stem}:${kind}:ch`,
      aux: `${stem}:${kind}:aux`,
    });
  }
}

/** Lock names KeySpace keeps built per kind tag. */
const NAMES_KEPT = 1024;

/** Short tags of the lock kinds; part of each Redis key name. */
export type LockKindTag = 'm' | 'rw' | 'fair' | 'sem';

/** The Redis names one lock uses. `aux` is a second structure some kinds need (queue, permits). */
export interface LockKeyNames {
  readonly lock: string;
  readonly fence: string;
  readonly channel: string;
  readonly aux: string;
}

function encodeTag(key: string): string {
  return key.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}
