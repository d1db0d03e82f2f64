/**
 * Scenarios 3 and 4: a holder stops running past its lease, either frozen by SIGSTOP or with its
 * own event loop blocked. Meanwhile the lease runs out and a second holder takes the lock. The
 * fencing oracle (a separate Redis) must reject the first holder's stale write; its signal must
 * fire once it runs again; its late release must leave the new holder's lock alone.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { epochMs, round1 } from '../support/clock';
import { expectCleanRedis, faultEngine, lockKeyOf, WATCHDOG_LEASE_MS } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { keySnapshot } from '../support/lock-env';
import { faultFigures } from '../support/fault-figures';
import { Holder, startHolder } from '../support/holders';

const env = useFaultEnv();
const figures = faultFigures();

const LEASES: [string, number | undefined][] = [
  [`watchdog lease ${WATCHDOG_LEASE_MS} ms`, undefined],
  ['fixed lease 800 ms', 800],
];

/** Takes the lock in a worker, lets it write once, then stalls it with `stall` until `resume` is called. */
async function stalledHolderScenario(
  key: string,
  leaseMs: number | undefined,
  stall: (holder: Holder) => Promise<{ resume: () => void; staleWriteFollows: boolean }>,
) {
  const holder = await startHolder(env.redis.url, env.storeServer.url);
  const engine = faultEngine(env.redis.url);
  try {
    holder.send({ type: 'acquire', id: key, key, options: { leaseMs } });
    const first = await holder.next('granted', key);
    holder.send({ type: 'write', id: key, resource: key });
    expect((await holder.next('written', key)).accepted).toBe(true);

    const { resume, staleWriteFollows } = await stall(holder);
    const stalledAt = epochMs();
    const second = await engine.acquire(key, { waitMs: 30_000 });
    const secondAt = epochMs();
    expect(second.fencingToken).toBeGreaterThan(first.token);
    expect((await env.store.write(key, second.fencingToken, 'second')).accepted).toBe(true);
    const secondLock = await keySnapshot(env.admin, lockKeyOf(key));
    expect(holder.process.messages.some((m) => m.type === 'lost')).toBe(false);

    const resumedAt = epochMs();
    resume();
    if (!staleWriteFollows) holder.send({ type: 'write', id: key, resource: key });
    const lost = await holder.next('lost', key);
    const stale = await holder.next('written', key);
    expect(['expired', 'taken-over']).toContain(lost.reason);
    expect(stale.accepted).toBe(false);
    expect(stale.token).toBe(first.token);

    holder.send({ type: 'release', id: key });
    expect((await holder.next('released', key)).result).toBe(false);
    expect(await keySnapshot(env.admin, lockKeyOf(key))).toEqual(secondLock);
    expect(second.isHeld).toBe(true);
    expect(second.signal.aborted).toBe(false);

    holder.send({ type: 'ping' });
    await holder.next('pong');
    expect(holder.unhandled()).toEqual([]);
    expect(await second.release()).toBe(true);
    const oracle = await env.store.state(key);
    expect(oracle).toMatchObject({ token: second.fencingToken, writer: 'second', accepted: 2, rejected: 1 });
    return {
      handoverAfterStallMs: round1(secondAt - stalledAt),
      signalAfterResumeMs: round1(lost.at - resumedAt),
      lostReason: lost.reason,
      staleWriteRejected: !stale.accepted,
    };
  } finally {
    await engine.close();
    await holder.stop();
  }
}

describe('scenario 3: holder frozen with SIGSTOP past its lease', () => {
  it.each(LEASES)(
    'rejects the stale write, fires the signal on resume and keeps the new lock (%s)',
    async (label, leaseMs) => {
      const result = await stalledHolderScenario(`sigstop:${leaseMs ?? 'wd'}`, leaseMs, async (holder) => {
        holder.process.pause();
        return { resume: () => holder.process.resume(), staleWriteFollows: false };
      });
      await expectCleanRedis(env.admin);
      figures.record(`3-holder-sigstop-${leaseMs ? 'fixed' : 'watchdog'}`, {
        title: `Holder SIGSTOPped past its lease (${label})`,
        ...result,
      });
    },
  );
});

describe('scenario 4: holder event loop blocked past its lease', () => {
  it.each(LEASES)(
    'rejects the write made right after the block, fires the signal and does not crash (%s)',
    async (label, leaseMs) => {
      const flag = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ndl-block-')), 'go');
      try {
        const key = `blocked:${leaseMs ?? 'wd'}`;
        const result = await stalledHolderScenario(key, leaseMs, async (holder) => {
          holder.send({
            type: 'block',
            untilFile: flag,
            maxMs: 60_000,
            thenWrite: { id: key, resource: key },
          });
          return { resume: () => fs.writeFileSync(flag, 'go'), staleWriteFollows: true };
        });
        await expectCleanRedis(env.admin);
        figures.record(`4-holder-event-loop-blocked-${leaseMs ? 'fixed' : 'watchdog'}`, {
          title: `Holder event loop blocked past its lease (${label})`,
          ...result,
        });
      } finally {
        fs.rmSync(path.dirname(flag), { recursive: true, force: true });
      }
    },
  );
});
