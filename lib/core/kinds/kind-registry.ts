import type { LockKind as InspectedKind } from '../options/lock-info';
import type { LockOptions } from '../options/lock-options';
import type { LockKindTag } from './key-space';
import type { LockKind } from './lock-kind';

/*
 * The table of kinds: which kind a call's options choose, its Redis tag and what inspection and events
 * call it, and the registry that finds a backend's instance of it.
 */

/** What options choose: one row of KINDS. */
export type KindName = 'mutex' | 'token' | 'read' | 'write' | 'fair' | 'semaphore';

/** One kind's names: where its instance sits in a backend, its Redis tag, and what inspection and events call it. */
export interface KindRow {
  /** The backend's instance that serves it (read and write share the read-write lock). */
  readonly impl: keyof LockKinds;
  /** Part of the Redis key names; kinds with the same tag exclude each other (mutex and token). */
  readonly tag: LockKindTag;
  /** Its name in inspect(), list() and the registry. */
  readonly inspection: InspectedKind;
  /** Its name in events and metrics (`kind`). */
  readonly event: KindName;
  /** The option that chooses it (named when a backend does not offer it). */
  readonly option?: 'mode' | 'fair' | 'limit';
}

/** Every kind, in one table: the only place a kind's tag and names are written down. */
export const KINDS: Readonly<Record<KindName, KindRow>> = {
  mutex: { impl: 'mutex', tag: 'm', inspection: 'mutex', event: 'mutex' },
  token: { impl: 'token', tag: 'm', inspection: 'token', event: 'token' },
  read: { impl: 'readWrite', tag: 'rw', inspection: 'read-write', event: 'read', option: 'mode' },
  write: { impl: 'readWrite', tag: 'rw', inspection: 'read-write', event: 'write', option: 'mode' },
  fair: { impl: 'fair', tag: 'fair', inspection: 'fair', event: 'fair', option: 'fair' },
  semaphore: { impl: 'semaphore', tag: 'sem', inspection: 'semaphore', event: 'semaphore', option: 'limit' },
};

/** Every Redis key tag, once each, in the order of KINDS: m, rw, fair, sem. */
export const KIND_TAG_LIST: readonly LockKindTag[] = [...new Set(Object.values(KINDS).map((row) => row.tag))];

/** The kind validated options ask for. */
export function kindOf(opts: LockOptions): KindRow {
  if (opts.mode !== undefined) return opts.mode === 'write' ? KINDS.write : KINDS.read;
  if (opts.fair) return KINDS.fair;
  if (opts.limit !== undefined) return KINDS.semaphore;
  return opts.reentrant === false ? KINDS.token : KINDS.mutex;
}

/** The lock kinds a backend offers; a missing one is refused with a clear error. */
export interface LockKinds {
  mutex: LockKind;
  token: LockKind;
  readWrite?: LockKind;
  fair?: LockKind;
  semaphore?: LockKind;
}

/** Picks a backend's kind for validated options. */
export class KindRegistry {
  constructor(
    private readonly kinds: LockKinds,
    private readonly backendName: string,
  ) {}

  kindFor(opts: LockOptions): LockKind {
    return this.chooseKind(opts).kind;
  }

  /** The kind validated options ask for, and its name in events (`label`). */
  chooseKind(opts: LockOptions): { readonly kind: LockKind; readonly label: KindName } {
    const row = kindOf(opts);
    const found = this.kinds[row.impl];
    if (!found) throw new TypeError(`The "${row.option!}" option is not supported with ${this.backendName}`);
    return { kind: found, label: row.event };
  }
}

/** Every LockKind of inspection, in the order inspect() looks at them (the order of KINDS). */
export const LOCK_KINDS: readonly InspectedKind[] = [
  ...new Set(Object.values(KINDS).map((row) => row.inspection)),
];

/** The Redis key tag of each kind (`mutex` and `token` share `m`: they exclude each other), from KINDS. */
export const KIND_TAGS: Readonly<Record<InspectedKind, LockKindTag>> = Object.fromEntries(
  Object.values(KINDS).map((row) => [row.inspection, row.tag]),
) as Record<InspectedKind, LockKindTag>;
