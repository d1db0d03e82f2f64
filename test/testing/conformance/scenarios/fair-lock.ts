import { CONFORMANCE_SETTINGS } from '../conformance-sides';
import { FENCE_BASE } from '../normalise';
import { fair, LONG_MS, release, Scenario, seed, sleep, WAITER_TTL_MS } from './steps';

/** Conformance scenarios of the fair lock (fair-acquire.lua, fair-abandon.lua, mutex-release.lua, renew.lua), per waiter and with fair cohorts. */
export const FAIR_LOCK_SCENARIOS: Scenario[] = [
  {
    name: 'grants the head, re-enters, queues the others in order, releases hold by hold',
    steps: [
      fair('A', { want: 'granted' }),
      fair('A', { hold: 'h2', want: 'reentered' }),
      fair('B', { want: 'busy' }),
      fair('C', { want: 'busy' }),
      fair('B', { want: 'busy' }),
      release('fair', 'A', { hold: 'h2', want: 'still-held' }),
      release('fair', 'B', { want: 'not-held' }),
      release('fair', 'A', { want: 'released' }),
      fair('C', { want: 'busy' }),
      fair('B', { want: 'granted' }),
      { do: 'renew', kind: 'fair', who: ['B', 'C'], leaseMs: 30_000, want: ['renewed', 'taken-over'] },
    ],
  },
  {
    name: 're-entry only is refused when not held',
    steps: [
      fair('A', { reenter: true, want: 'not-held' }),
      fair('B'),
      fair('A', { reenter: true, want: 'not-held' }),
    ],
  },
  {
    name: 'a waiter that gives up leaves the queue and wakes the next head of a free lock',
    steps: [
      fair('A'),
      fair('B'),
      fair('C'),
      { do: 'abandon', kind: 'fair', who: 'C' },
      { do: 'abandon', kind: 'fair', who: 'C' },
      fair('C'),
      release('fair', 'A'),
      { do: 'abandon', kind: 'fair', who: 'B' },
      fair('C', { want: 'granted' }),
    ],
  },
  {
    name: 'a head whose deadline passed is dropped by the next attempt, which wakes the new head',
    // B's deadline passes for sure (the sleeps alone outlast it); C's is WAITER_TTL_MS - 1.5 s away.
    steps: [
      fair('A'),
      fair('B'),
      sleep(WAITER_TTL_MS - 1000),
      fair('C'),
      sleep(1500),
      release('fair', 'A', { want: 'released' }),
      fair('D', { want: 'busy' }),
      fair('C', { want: 'granted' }),
    ],
  },
  {
    name: 'fair cohorts: one entry per process, a grant reserves tokens, the entry leaves by abandon',
    steps: [
      // The fair lock's own counter, seeded so that the reserved blocks show in the tokens.
      seed('fair', 'fence', {
        type: 'string',
        value: String(FENCE_BASE),
        ttlMs: CONFORMANCE_SETTINGS.fenceTtlMs,
      }),
      fair('A', { process: 'P1', reserve: 4, want: 'granted' }),
      fair('B', { process: 'P2', want: 'busy' }),
      fair('C', { process: 'P2', want: 'busy' }),
      fair('D', { process: 'P3', want: 'busy' }),
      { do: 'abandon', kind: 'fair', who: 'D', process: 'P3' },
      { do: 'abandon', kind: 'fair', who: 'D', process: 'P3' },
      release('fair', 'A', { yieldTo: { process: 'P1', ms: 30_000 }, want: 'released' }),
      fair('E', { process: 'P3', want: 'busy' }),
      fair('C', { process: 'P2', reserve: 4, want: 'granted' }),
      { do: 'abandon', kind: 'fair', who: 'E', process: 'P3' },
      release('fair', 'C', { want: 'released' }),
      fair('F', { process: 'P1', reserve: 4, want: 'granted' }),
    ],
  },
  {
    name: 'refuses foreign data at each of its keys',
    steps: [
      seed('fair', 'lock', { type: 'string', value: 'x', ttlMs: LONG_MS }),
      fair('A', { want: 'LockWrongTypeError' }),
      seed('fair', 'lock', { type: 'hash', fields: { owner: 'owner-B' }, ttlMs: LONG_MS }),
      seed('fair', 'aux', { type: 'hash', fields: { a: '1' }, ttlMs: LONG_MS }),
      fair('A', { want: 'LockWrongTypeError' }),
      { do: 'abandon', kind: 'fair', who: 'A' },
      seed('fair', 'aux', { type: 'zset', members: [['owner-A', 1]], ttlMs: LONG_MS }),
      seed('fair', 'deadlines', { type: 'list', items: ['x'] }),
      fair('A', { want: 'LockWrongTypeError' }),
      { do: 'abandon', kind: 'fair', who: 'A' },
    ],
  },
];
