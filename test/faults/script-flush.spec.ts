/**
 * Scenario 8 and the NOSCRIPT row of the bad-input table: SCRIPT FLUSH (or a failover to a
 * server that never saw the scripts) empties the script cache. Release, extend and watchdog
 * renewal must reload transparently — one EVAL after the failed EVALSHA, no error surfaced —
 * and the next call must be back on EVALSHA.
 */
import { expectCleanRedis, faultEngine } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { parseInfo } from '../support/redis-command';
import { waitUntil } from '../support/wait';
import type { LockEngine } from '../../lib/core';

const env = useFaultEnv();
const figures = faultFigures();

/** calls / failed_calls of EVAL and EVALSHA since the last CONFIG RESETSTAT. */
async function scriptStats(): Promise<{ eval: number; evalsha: number; evalshaFailed: number }> {
  const info = parseInfo(await env.admin.info('commandstats'));
  const field = (cmd: string, name: string) =>
    Number(info[`cmdstat_${cmd}`]?.match(new RegExp(`${name}=(\\d+)`))?.[1] ?? 0);
  return {
    eval: field('eval', 'calls'),
    evalsha: field('evalsha', 'calls'),
    evalshaFailed: field('evalsha', 'failed_calls'),
  };
}

/** Flushes the script cache and resets the command statistics, atomically. */
async function flushScripts(): Promise<void> {
  await env.admin.multi().config('RESETSTAT').script('FLUSH').exec();
}

function watchErrors(engine: LockEngine): string[] {
  const problems: string[] = [];
  engine.events.on('lost', (e) => problems.push(`lost: ${e.reason}`));
  engine.events.on('notAcquired', (e) => problems.push(`notAcquired: ${e.reason}`));
  engine.events.on(
    'released',
    (e) => e.result === 'failed' && problems.push(`release failed: ${String(e.error)}`),
  );
  engine.events.on('renewed', (r) => r.failed + r.lost > 0 && problems.push(`renewal: ${JSON.stringify(r)}`));
  return problems;
}

describe('scenario 8: SCRIPT FLUSH before release, extend and renewal', () => {
  it.each([
    ['reentrant mutex', true],
    ['token lock', false],
  ])('reloads each script with exactly one EVAL and surfaces no error (%s)', async (label, reentrant) => {
    const engine = faultEngine(env.redis.url, { watchdogLeaseMs: 1000, renewEveryMs: 100 });
    const problems = watchErrors(engine);
    const perOperation: Record<string, unknown> = {};
    try {
      // A fixed lease first: no watchdog round can slip in between the flush and the call measured.
      await flushScripts();
      const lock = await engine.acquire(`flush:${label}`, { reentrant, leaseMs: 10_000 });
      perOperation.acquire = await scriptStats();
      expect(perOperation.acquire).toEqual({ eval: 1, evalsha: 1, evalshaFailed: 1 });

      await flushScripts();
      await lock.extend(20_000);
      perOperation.extend = await scriptStats();
      expect(perOperation.extend).toEqual({ eval: 1, evalsha: 1, evalshaFailed: 1 });

      await flushScripts();
      expect(await lock.release()).toBe(true);
      perOperation.release = await scriptStats();
      expect(perOperation.release).toEqual({ eval: 1, evalsha: 1, evalshaFailed: 1 });

      // Then a watchdog lease: the next renewal round hits the empty cache.
      const renewed = await engine.acquire(`flush:${label}`, { reentrant });
      await flushScripts();
      // Two renewals after the flush: the one that met NOSCRIPT and reloaded, and one back on EVALSHA.
      const renewal = await waitUntil(
        async () => {
          const stats = await scriptStats();
          return stats.evalsha - stats.evalshaFailed >= 1 && stats;
        },
        { description: 'a renewal after the reload' },
      );
      expect(renewal.eval).toBe(1);
      expect(renewal.evalshaFailed).toBe(1);
      perOperation.renewal = renewal;
      expect(renewed.isHeld).toBe(true);
      expect(await renewed.release()).toBe(true);

      // Back on EVALSHA once both scripts ran again: a cached script costs no EVAL.
      await engine.using(`flush:${label}`, { reentrant }, async () => undefined);
      await env.admin.config('RESETSTAT');
      await engine.using(`flush:${label}`, { reentrant }, async () => undefined);
      expect(await scriptStats()).toEqual({ eval: 0, evalsha: 2, evalshaFailed: 0 });

      expect(problems).toEqual([]);
      await expectCleanRedis(env.admin);
      figures.record(`8-script-flush-${reentrant ? 'mutex' : 'token'}`, {
        title: `SCRIPT FLUSH before acquire, extend, renewal and release (${label})`,
        commandsAfterFlush: perOperation,
        errorsSurfaced: problems.length,
      });
    } finally {
      await engine.close();
    }
  });
});
