/** The family specs' (read-write, fair, semaphore) lock env options and the Redis names of their locks. */
import { KeySpace, LockKeyNames, LockKindTag } from '../../lib/core/kinds/key-space';
import type { LockEnvOptions } from './lock-env';

/** Key prefix of every lock in the family specs (engines and workers). */
export const PREFIX = 'fam:';

/** `useLockEnv(FAMILY_ENV)`: engines and workers on PREFIX. */
export const FAMILY_ENV: LockEnvOptions = { keyPrefix: PREFIX };

/** The Redis names of `key`'s lock of the given kind. */
export function lockNames(key: string, kind: LockKindTag): LockKeyNames {
  return new KeySpace(PREFIX).names(key, kind);
}
