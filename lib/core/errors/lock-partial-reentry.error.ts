import { LockError } from './lock-error';

/**
 * A multi-key call named keys of which this async context holds some but not all. Taking the rest
 * while holding some would wait while holding (the deadlock multi-key locks exist to prevent), and
 * re-entering only some would leave the caller believing it holds all. Ask for a subset of what
 * is held (re-enters), or take the other keys outside this critical section.
 */
export class LockPartialReentryError extends LockError {
  /** The asked-for keys this context already holds. */
  readonly heldKeys: readonly string[];
  /** The asked-for keys it does not hold. */
  readonly missingKeys: readonly string[];

  constructor(heldKeys: readonly string[], missingKeys: readonly string[]) {
    super(
      `Locks ${list(missingKeys)} not acquired: this async context already holds ${list(heldKeys)} of the ` +
        'keys asked for together, and taking more keys while holding some could deadlock. Ask for a ' +
        'subset of the held keys (it re-enters), or lock all of them before entering the critical section.',
      missingKeys[0],
    );
    this.heldKeys = heldKeys;
    this.missingKeys = missingKeys;
  }
}

function list(keys: readonly string[]): string {
  const shown = keys.slice(0, 5).map((k) => JSON.stringify(k.length > 40 ? k.slice(0, 40) + '…' : k));
  return shown.join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
}
