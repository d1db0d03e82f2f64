/*
 * The steps of the conformance scenarios (one file per kind beside this one): kind-level requests
 * (and a few raw script calls) whose scripts run, step by step, on Redis and in memory with the
 * same KEYS and ARGV. Owners, hold ids and processes
 * are fixed names (the same on both sides), leases are long (60 s, compared within the tolerance) or deliberately short and then
 * slept past. `want` states what a step is meant to provoke on Redis, the reference, so a scenario
 * cannot silently stop testing what its name says. To cover a new script or reply code, add a
 * scenario to its kind's file (../script-replies.ts lists the codes).
 */
import type { LockKinds } from '../../../../lib/core/kinds/kind-registry';
import type { LockKindTag } from '../../../../lib/core/kinds/key-space';
import type { ScriptArg } from '../../../../lib/core/redis/script-library';
import { CONFORMANCE_SETTINGS, Fixture } from '../conformance-sides';
import { TOLERANCE_MS } from '../normalise';

/** The kinds by their LockKinds name. */
export type KindName = keyof Required<LockKinds>;

/** What a call is about: kind, owner (a letter), hold and the options the kind reads. */
export interface Call {
  kind: KindName;
  /** Owner 'A' is the owner id 'owner-A' on both sides. */
  who: string;
  /** The user key (default: the scenario's key, KEY). */
  key?: string;
  /** Hold id (default 'h1'). */
  hold?: string;
  mode?: 'read' | 'write';
  limit?: number;
  permits?: number;
}

/** The decoded outcome a step should have on Redis: a status / result, or the error's class name. */
export type Want =
  | 'granted'
  | 'reentered'
  | 'busy'
  | 'not-held'
  | 'released'
  | 'still-held'
  | 'LockWrongTypeError'
  | 'LockUpgradeError'
  | 'LockRedisError';

/** One step of a scenario. */
export type Step =
  | (Call & {
      do: 'attempt';
      leaseMs?: number;
      reenter?: boolean;
      /** reserveTokens (cohort kinds). */
      reserve?: number;
      /** The caller's process id (cohort kinds). */
      process?: string;
      /** A tryAcquire-like attempt with no time left to wait (the semaphore then never reserves). */
      noWait?: boolean;
      want?: Want;
    })
  | (Call & { do: 'release'; yieldTo?: { process: string; ms: number }; want?: Want })
  | (Call & {
      do: 'abandon';
      /** The caller's process id (fair cohorts: the queue entry). */ process?: string;
    })
  | { do: 'renew'; kind: KindName; who: string[]; leaseMs?: number; want?: string[] }
  /** Several keys at once (multi-acquire.lua through RedisMultiLocker): mutexes, or token locks. */
  | { do: 'multi'; who: string; keys: string[]; reentrant?: boolean; hold?: string; want?: Want }
  /** A raw script call on the lock's keys (KEYS as named here), e.g. an argument the kinds never send. */
  | { do: 'script'; script: string; tag: LockKindTag; keys: SeedAt[]; args: ScriptArg[]; want?: Want }
  | { do: 'seed'; tag: LockKindTag; at: SeedAt; fixture: Fixture; key?: string }
  | { do: 'sleep'; ms: number };

/** Which of the lock's keys a seed step writes (`fence`: the kind's fencing counter). */
export type SeedAt = 'lock' | 'aux' | 'deadlines' | 'fence';

/** A named sequence of steps on one user key. */
export interface Scenario {
  name: string;
  steps: Step[];
  /** Leave the fence counter absent, so the first token is floored by the server clock. */
  freshFence?: boolean;
}

/** The scenario's user key (its lock keys are named under the scenario's prefix). */
export const KEY = 'conformance-key';

/** The default lease of a step. */
export const LONG_MS = 60_000;
/**
 * A lease (or reservation) a scenario then sleeps past. As long as the comparison's tolerance: a key
 * must not expire on one side between that side's step and its state read while the other still
 * has it, even on a loaded machine.
 */
export const SHORT_MS = TOLERANCE_MS;
/** A sleep past SHORT_MS (it starts once both sides ran the step, so both have expired). */
export const PAST_SHORT_MS = SHORT_MS + 200;
/** How long waiter places, markers and reservations live on both sides. */
export const WAITER_TTL_MS = CONFORMANCE_SETTINGS.waiterTtlMs;

/** An attempt on the reentrant mutex. */
export const mutex = (who: string, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'mutex',
  who,
  ...extra,
});
/** An attempt on the token lock. */
export const token = (who: string, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'token',
  who,
  ...extra,
});
/** A release of one hold. */
export const release = (
  kind: KindName,
  who: string,
  extra: Partial<Extract<Step, { do: 'release' }>> = {},
): Step => ({
  do: 'release',
  kind,
  who,
  ...extra,
});
/** An attempt on the read-write lock. */
export const rw = (
  who: string,
  mode: 'read' | 'write',
  extra: Partial<Extract<Step, { do: 'attempt' }>> = {},
): Step => ({
  do: 'attempt',
  kind: 'readWrite',
  who,
  mode,
  ...extra,
});
/** An attempt on the fair lock. */
export const fair = (who: string, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'fair',
  who,
  ...extra,
});
/** An attempt on the semaphore under `limit`. */
export const sem = (
  who: string,
  limit: number,
  extra: Partial<Extract<Step, { do: 'attempt' }>> = {},
): Step => ({
  do: 'attempt',
  kind: 'semaphore',
  who,
  limit,
  ...extra,
});
/** Puts `fixture` at one of the lock's keys (of `key`, default KEY). */
export const seed = (tag: LockKindTag, at: SeedAt, fixture: Fixture, key?: string): Step => ({
  do: 'seed',
  tag,
  at,
  fixture,
  ...(key !== undefined && { key }),
});
/** Several keys at once (mutexes unless `reentrant: false`). */
export const multi = (
  who: string,
  keys: string[],
  extra: Partial<Extract<Step, { do: 'multi' }>> = {},
): Step => ({ do: 'multi', who, keys, ...extra });
/** Waits (e.g. past a short lease); the state is compared after it. */
export const sleep = (ms: number): Step => ({ do: 'sleep', ms });
