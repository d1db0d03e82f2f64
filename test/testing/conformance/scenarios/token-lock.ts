import { LONG_MS, mutex, PAST_SHORT_MS, release, Scenario, seed, SHORT_MS, sleep, token } from './steps';

/** Conformance scenarios of the token lock (token-acquire.lua, token-release.lua, renew.lua). */
export const TOKEN_LOCK_SCENARIOS: Scenario[] = [
  {
    name: 'grants with a reserved block, answers a re-sent grant with the same token, refuses others',
    steps: [
      token('A', { reserve: 5, want: 'granted' }),
      token('A', { reserve: 5, want: 'granted' }),
      token('B', { want: 'busy' }),
      mutex('B', { process: 'P2', want: 'busy' }),
      release('token', 'B', { want: 'not-held' }),
      { do: 'renew', kind: 'token', who: ['A', 'B'], want: ['renewed', 'taken-over'] },
      release('token', 'A', { want: 'released' }),
      release('token', 'A', { want: 'not-held' }),
      token('B', { want: 'granted' }),
    ],
  },
  {
    name: 'a re-sent grant whose counter is gone takes a new token',
    freshFence: true,
    steps: [
      seed('m', 'lock', { type: 'string', value: 'owner-A', ttlMs: LONG_MS }),
      token('A', { want: 'granted' }),
    ],
  },
  {
    name: 'a mutex of the same name is busy for the token lock, and its release leaves it alone',
    steps: [mutex('A'), token('B', { want: 'busy' }), release('token', 'B', { want: 'not-held' })],
  },
  {
    name: 'a lease that ran out frees the lock',
    steps: [
      token('A', { leaseMs: SHORT_MS }),
      sleep(PAST_SHORT_MS),
      { do: 'renew', kind: 'token', who: ['A'], want: ['gone'] },
      release('token', 'A', { want: 'not-held' }),
      token('B', { want: 'granted' }),
    ],
  },
  {
    name: 'refuses foreign data at its key',
    steps: [
      seed('m', 'lock', { type: 'zset', members: [['x', 1]] }),
      token('A', { want: 'LockWrongTypeError' }),
      seed('m', 'lock', { type: 'string', value: 'app data' }),
      token('A', { want: 'LockWrongTypeError' }),
      release('token', 'A', { want: 'not-held' }),
      seed('m', 'lock', { type: 'hash', fields: { owner: 'owner-B' } }),
      token('A', { want: 'LockWrongTypeError' }),
    ],
  },
];
