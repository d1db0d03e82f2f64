/**
 * Scenario 18 (issue 18, point 1): the network, through a TCP proxy on loopback
 * (test/support/tcp-proxy.ts). A holder in its own process reaches Redis only through the proxy;
 * the proxy then blackholes it (both directions, connections left open, as in a partition). Another
 * process, connected directly, waits for the same lock. The holder's signal must abort BEFORE the
 * other process is granted the lock — with fixed and watchdog leases, short and long (a watchdog
 * holder is partitioned right after a renewal). The leases are 1.5 s and 6 s rather than the 6 s and
 * 30 s of a production set-up: each case keeps the production ratio of command timeout to lease
 * (5 s to 6 s, 5 s to 30 s), which is what decides whether the holder learns of the partition in time. After healing, the holder's late release leaves the
 * new holder alone, its stale write is fenced off, and it can take locks again. Margins (how long
 * before the other grant the holder knew) go to .results/faults/latest.json.
 */
import { epochMs, round1 } from '../../support/clock';
import { faultEngine, lockKeyOf } from '../../support/fault-engine';
import { useFaultEnv } from '../../support/fault-env';
import { keySnapshot } from '../../support/lock-env';
import { faultFigures } from '../../support/fault-figures';
import { startHolder } from '../../support/holders';
import { TcpProxy } from '../../support/tcp-proxy';

const env = useFaultEnv();
const figures = faultFigures();

/** [label, lease kind, lease, command timeout]: the command timeout is 5/6 of the short lease, 1/6 of the long. */
const CASES: [string, 'fixed' | 'watchdog', number, number][] = [
  ['fixed lease 1.5 s', 'fixed', 1_500, 1_250],
  ['watchdog lease 1.5 s', 'watchdog', 1_500, 1_250],
  ['fixed lease 6 s', 'fixed', 6_000, 1_000],
  ['watchdog lease 6 s', 'watchdog', 6_000, 1_000],
];

describe('scenario 18: a holder partitioned from Redis', () => {
  it.each(CASES)(
    '%s: the holder is told before another process is granted the lock',
    async (label, lease, ms, commandTimeoutMs) => {
      const key = `partition:${lease}:${ms}`;
      const proxy = await TcpProxy.start(env.redis.port);
      // Watchdog renewals every lease / 3 (Redisson's ratio).
      const holder = await startHolder(proxy.url, env.storeServer.url, {
        watchdogLeaseMs: ms,
        renewEveryMs: Math.floor(ms / 3),
        commandTimeoutMs,
      });
      const other = faultEngine(env.redis.url, { commandTimeoutMs });
      try {
        holder.send({
          type: 'acquire',
          id: key,
          key,
          options: { leaseMs: lease === 'fixed' ? ms : undefined },
        });
        const first = await holder.next('granted', key);
        if (lease === 'watchdog') await holder.next('renewed', undefined, ms);
        proxy.blackhole('both');
        const partitionedAt = epochMs();

        const second = await other.acquire(key, { waitMs: ms + 15_000 });
        const grantedAt = epochMs();
        const lost = await holder.next('lost', key, 15_000);

        expect(lost.at).toBeLessThan(grantedAt);
        expect(['expired', 'renewal-failed']).toContain(lost.reason);
        expect(second.fencingToken).toBeGreaterThan(first.token);
        expect((await env.store.write(key, second.fencingToken, 'second')).accepted).toBe(true);
        figures.record(`partition: ${label}`, {
          holderToldBeforeOtherGrantMs: round1(grantedAt - lost.at),
          holderToldAfterPartitionMs: round1(lost.at - partitionedAt),
          reason: lost.reason,
        });

        // Healing: the held-back commands arrive late and change nothing.
        const secondLock = await keySnapshot(env.admin, lockKeyOf(key));
        proxy.heal();
        holder.send({ type: 'write', id: key, resource: key });
        expect((await holder.next('written', key)).accepted).toBe(false);
        holder.send({ type: 'release', id: key });
        expect((await holder.next('released', key)).result).toBe(false);
        expect(await keySnapshot(env.admin, lockKeyOf(key))).toEqual(secondLock);
        expect(second.isHeld).toBe(true);

        // Acquisitions resume through the healed proxy.
        expect(await second.release()).toBe(true);
        holder.send({ type: 'acquire', id: 'again', key, options: { leaseMs: 2_000 } });
        expect((await holder.next('granted', 'again')).token).toBeGreaterThan(second.fencingToken);
        holder.send({ type: 'release', id: 'again' });
        expect((await holder.next('released', 'again')).result).toBe(true);
        expect(holder.unhandled()).toEqual([]);
      } finally {
        await holder.stop();
        await other.close();
        await proxy.close();
      }
    },
    120_000,
  );
});
