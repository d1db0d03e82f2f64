import { KEY, LONG_MS, multi, mutex, release, Scenario, seed } from './steps';

/** A second user key of the multi-key scenarios (its fence counter starts fresh: tokens from the clock). */
const K2 = `${KEY}-2`;

/** Conformance scenarios of multi-key locks (multi-acquire.lua, through RedisMultiLocker). */
export const MULTI_KEY_SCENARIOS: Scenario[] = [
  {
    name: 'takes free mutexes at once, answers a re-sent call with its tokens, records a busy caller',
    steps: [
      multi('A', [KEY, K2], { want: 'granted' }),
      multi('A', [KEY, K2], { want: 'granted' }),
      mutex('B', { key: K2, process: 'P2', want: 'busy' }),
      multi('C', [KEY, K2], { want: 'busy' }),
      release('mutex', 'A', { want: 'released' }),
      release('mutex', 'A', { key: K2, want: 'released' }),
      multi('C', [KEY, K2], { want: 'granted' }),
    ],
  },
  {
    name: 'takes token locks at once; a lock of the other kind is busy either way',
    steps: [
      multi('D', [KEY, K2], { reentrant: false, want: 'granted' }),
      multi('D', [KEY, K2], { reentrant: false, want: 'granted' }),
      mutex('E', { want: 'busy' }),
      multi('E', [KEY], { want: 'busy' }),
      release('token', 'D', { want: 'released' }),
      release('token', 'D', { key: K2, want: 'released' }),
      mutex('F', { key: K2 }),
      multi('G', [KEY, K2], { reentrant: false, want: 'busy' }),
    ],
  },
  {
    name: 'a key the owner holds once gets a second hold from a multi-key call (its string becomes the hash)',
    steps: [
      mutex('A'),
      mutex('B', { process: 'P2', want: 'busy' }),
      multi('A', [KEY, K2], { hold: 'h2', want: 'granted' }),
      release('mutex', 'A', { want: 'still-held' }),
      release('mutex', 'A', { hold: 'h2', want: 'released' }),
      release('mutex', 'A', { key: K2, hold: 'h2', want: 'released' }),
    ],
  },
  {
    name: "a mutex reserved for the caller at a cohort's end is granted to it alone",
    steps: [
      mutex('A', { process: 'P1', reserve: 4 }),
      multi('B', [KEY], { want: 'busy' }),
      release('mutex', 'A', { yieldTo: { process: 'P1', ms: 30_000 }, want: 'released' }),
      multi('C', [KEY], { want: 'busy' }),
      multi('B', [KEY], { want: 'granted' }),
    ],
  },
  {
    name: 'refuses foreign data at any of its keys and writes nothing',
    steps: [
      seed('m', 'lock', { type: 'list', items: ['app'] }, K2),
      multi('A', [KEY, K2], { want: 'LockWrongTypeError' }),
      seed('m', 'lock', { type: 'hash', fields: { name: 'app' }, ttlMs: LONG_MS }, K2),
      multi('A', [KEY, K2], { want: 'LockWrongTypeError' }),
      seed('m', 'lock', { type: 'string', value: 'owner-A' }),
      multi('A', [KEY], { reentrant: false, want: 'LockWrongTypeError' }),
    ],
  },
];
