/*
 * Deadlock freedom and exclusion across OS processes: two groups of processes lock [a, b] and
 * [b, a], then others lock random subsets of five keys in random order, each section doing a
 * non-atomic read-modify-write of every locked key. No update may be lost, tokens strictly
 * increase per key, and every call gets its locks within its waitMs (a deadlock would time out).
 *
 * @slow groups of worker processes (~35 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { expectConsistent, runMultiWorkers } from '../support/multi-workers';

jest.setTimeout(180_000);

const WAIT_MS = '60000';
const env = useLockEnv();

const common = (label: string, keys: string[], pattern: string): Record<string, string> => ({
  REDIS_URL: env.url,
  KEY_PREFIX: 'mp:',
  DATA_PREFIX: label,
  KEYS: keys.join(','),
  PATTERN: pattern,
  WAIT_MS,
});

it('never deadlocks or loses an update when processes lock [a, b] and [b, a]', async () => {
  const label = uniqueKey('ab');
  const keys = [`${label}:a`, `${label}:b`];
  const done = await runMultiWorkers(
    [
      { processes: 2, env: { CALLERS: '4', ITERATIONS: '320', REVERSED: '0' } },
      { processes: 2, env: { CALLERS: '4', ITERATIONS: '320', REVERSED: '1' } },
    ],
    common(label, keys, 'ab'),
  );
  const perKey = await expectConsistent(env.admin, label, keys, done);
  expect(done.map((d) => d.timeouts)).toEqual([0, 0, 0, 0]);
  expect(done.map((d) => d.lost)).toEqual([0, 0, 0, 0]);
  expect(perKey[keys[0]!]).toBe(4 * 4 * 320);
  expect(perKey[keys[1]!]).toBe(4 * 4 * 320);
});

it('never deadlocks or loses an update with random subsets of five keys in random order', async () => {
  const label = uniqueKey('rnd');
  const keys = ['k1', 'k2', 'k3', 'k4', 'k5'].map((k) => `${label}:${k}`);
  const done = await runMultiWorkers(
    [{ processes: 4, env: { CALLERS: '4', ITERATIONS: '200' } }],
    common(label, keys, 'random'),
  );
  await expectConsistent(env.admin, label, keys, done);
  expect(done.map((d) => d.timeouts)).toEqual([0, 0, 0, 0]);
  expect(done.map((d) => d.lost)).toEqual([0, 0, 0, 0]);
  expect(done.reduce((sum, d) => sum + d.sections, 0)).toBe(4 * 4 * 200);
});
