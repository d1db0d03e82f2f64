import { LONG_MS, PAST_SHORT_MS, release, rw, Scenario, seed, SHORT_MS, sleep } from './steps';

/** Conformance scenarios of the read-write lock (read-write-*.lua, holders-renew.lua). */
export const READ_WRITE_SCENARIOS: Scenario[] = [
  {
    name: 'readers share, re-enter, and release hold by hold',
    steps: [
      rw('A', 'read', { want: 'granted' }),
      rw('B', 'read', { leaseMs: 30_000, want: 'granted' }),
      rw('A', 'read', { hold: 'h2', want: 'reentered' }),
      release('readWrite', 'A', { hold: 'h2', want: 'still-held' }),
      release('readWrite', 'A', { hold: 'h2', want: 'not-held' }),
      release('readWrite', 'A', { want: 'released' }),
      release('readWrite', 'B', { want: 'released' }),
    ],
  },
  {
    name: 'a refused writer leaves a marker that holds back new readers until it gives up',
    steps: [
      rw('A', 'read'),
      rw('W', 'write', { want: 'busy' }),
      rw('V', 'write', { want: 'busy' }),
      rw('B', 'read', { want: 'busy' }),
      rw('A', 'read', { hold: 'h2', want: 'reentered' }),
      { do: 'abandon', kind: 'readWrite', who: 'V', mode: 'write' },
      { do: 'abandon', kind: 'readWrite', who: 'W', mode: 'write' },
      rw('B', 'read', { want: 'granted' }),
    ],
  },
  {
    name: 'a writer excludes everyone, may read (downgrade), and a reader may not write (upgrade)',
    steps: [
      rw('A', 'read'),
      rw('A', 'write', { hold: 'h2', want: 'LockUpgradeError' }),
      release('readWrite', 'A'),
      rw('W', 'write', { want: 'granted' }),
      rw('B', 'read', { want: 'busy' }),
      rw('W', 'read', { hold: 'h2', want: 'reentered' }),
      release('readWrite', 'W', { mode: 'write', want: 'still-held' }),
      rw('B', 'read', { want: 'granted' }),
      release('readWrite', 'W', { hold: 'h2', want: 'released' }),
    ],
  },
  {
    name: 'a writer gets in once the readers are gone and takes its marker back',
    steps: [
      rw('A', 'read', { leaseMs: SHORT_MS }),
      rw('W', 'write', { want: 'busy' }),
      sleep(PAST_SHORT_MS),
      rw('W', 'write', { want: 'granted' }),
      rw('W', 'write', { reenter: true, hold: 'h2', want: 'reentered' }),
      rw('X', 'write', { reenter: true, want: 'not-held' }),
      { do: 'renew', kind: 'readWrite', who: ['W', 'A'], want: ['renewed', 'gone'] },
    ],
  },
  {
    name: 'an expired reader is pruned by the next access, which wakes the waiters',
    steps: [
      rw('A', 'read', { leaseMs: SHORT_MS }),
      rw('B', 'read'),
      sleep(PAST_SHORT_MS),
      release('readWrite', 'A', { want: 'not-held' }),
      rw('A', 'read', { leaseMs: SHORT_MS }),
      sleep(PAST_SHORT_MS),
      rw('C', 'read', { want: 'granted' }),
    ],
  },
  {
    name: 'refuses foreign data at either of its keys',
    steps: [
      seed('rw', 'lock', { type: 'hash', fields: { writer: 'app' } }),
      rw('A', 'read', { want: 'LockWrongTypeError' }),
      release('readWrite', 'A', { want: 'not-held' }),
      { do: 'abandon', kind: 'readWrite', who: 'A', mode: 'write' },
      { do: 'renew', kind: 'readWrite', who: ['A'], want: ['gone'] },
      seed('rw', 'lock', { type: 'hash', fields: { writer: 'app' }, ttlMs: LONG_MS }),
      seed('rw', 'aux', { type: 'string', value: 'app data', ttlMs: LONG_MS }),
      rw('A', 'write', { want: 'LockWrongTypeError' }),
    ],
  },
];
