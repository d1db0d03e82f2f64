/**
 * Issue 43, item 7: back-to-back Sentinel failovers under load. A primary, one replica and 3 sentinels
 * (`down-after-milliseconds 1000`, `failover-timeout 5000`); 4 processes (history-worker.ts, an engine
 * each on ioredis' Sentinel options) x 4 callers (two on a 1.5 s fixed lease, two on a 2 s watchdog
 * lease) looping over 2 keys with `waitMs` 2000 and `commandTimeoutMs` 1000. The primary is killed
 * (-9); 0.5 s after Sentinel promotes the replica, the old primary comes back EMPTY on its port, a
 * master of nothing until Sentinel makes it a replica; 14 s after the first kill, the same again.
 *
 * Before the fix, ioredis ended a Sentinel connection for good when the failover detector of its last
 * connection saw `+switch-master` while the client was asking a sentinel for the master's address
 * (lib/core/redis/adapters/ioredis-door.ts, reopenAfterSentinelGaveUp): that process' every acquire then
 * failed with "Redis did not answer mutex-acquire within 1000 ms" until the run ended. Asserted:
 *
 *   (a) liveness: after each promotion some process is granted a lock within ANY_GRANT_WITHIN_MS, and
 *       every process within EACH_GRANTED_WITHIN_MS (bounds for a loaded 2-core machine, not speed
 *       claims: the broken client never recovered at all; the second is longer because a process can
 *       lose the race for both keys a few times in a row, to the per-process cohorts of others);
 *   (b) mutual exclusion throughout: two holders of a key overlap only across a kill (a grant on the
 *       killed primary that the promoted replica never got: the loss docs/GUARANTEES.md names), or after
 *       a kill whose old primary, back empty, ran lock scripts for clients as a master (a sentinel that
 *       had not yet learned of the promotion sent a reconnecting client to it: two masters at once, the
 *       limit docs/GUARANTEES.md names). One overlap 2.2 s after a promotion, in 1 run of 20 before this
 *       count existed, is most likely that; such overlaps are reported in the figures and the log;
 *   (c) tokens strictly increase per key in grant order, across both failovers;
 *   (d) the fencing oracle accepted writes only in token order and refused only stale ones;
 *   (e) no unhandled rejection, and acquires failed only as "Redis unreachable" or "busy".
 *
 * The figures (promotion and first grant after it, per process) go to .results/faults/latest.json.
 */
import { round1 } from '../support/clock';
import { PREFIX } from '../support/fault-engine';
import { faultFigures } from '../support/fault-figures';
import { FenceOracle } from '../support/fence-oracle';
import {
  collectHistories,
  eventsOf,
  fenceViolations as fenceViolationsOf,
  stopHistoryWorker,
  tokenRegressions as tokenRegressionsOf,
  type Recorded,
} from '../support/history-checks';
import { redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { startSentinel, type RedisSentinelTopology } from '../support/redis-sentinel';
import { spawnWorker, workerPath, type WorkerProcess } from '../support/spawn-worker';
import { sleep, waitUntil } from '../support/wait';
import { historyEpochMs } from '../support/workers/history-clock';
import type { HistoryCaller, HistoryEvent, HistoryMessage } from '../support/workers/history-protocol';

const figures = faultFigures();

const PROCESSES = ['p1', 'p2', 'p3', 'p4'];
const KEYS = ['failover:a', 'failover:b'];
const CALLERS: HistoryCaller[] = [{ leaseMs: 1_500 }, { leaseMs: 1_500 }, {}, {}];
const HOLDS = { shortMs: [2, 40], longMs: [200, 600], longShare: 0.2 };
const ENGINE_OPTIONS = { keyPrefix: PREFIX, watchdogLeaseMs: 2_000, commandTimeoutMs: 1_000 };
const WAIT_MS = 2_000;
/** Load before the first kill; the second kill this long after the first. */
const BEFORE_KILL_MS = 3_000;
const BETWEEN_KILLS_MS = 14_000;
/** The old primary comes back (empty) this long after the promotion. */
const RESTART_AFTER_PROMOTION_MS = 500;
/** The run goes on this long after the second restart. */
const AFTER_LAST_RESTART_MS = 10_000;
/** Liveness: some process is granted a lock this soon after each promotion, and every process this soon. */
const ANY_GRANT_WITHIN_MS = 6_000;
const EACH_GRANTED_WITHIN_MS = 9_000;

interface Failover {
  killedAt: number;
  promotedAt: number;
  /** Which port each sentinel named at the promotion (the first to name another master counts). */
  sentinelsSaid: (number | null)[];
  restartedAt: number;
  /** Lock scripts the old primary, back empty, ran for clients as a master (watchScriptsAsMaster). */
  scriptsAsMaster: () => Promise<number>;
}

let group: RedisSentinelTopology;
let oracleServer: RedisServerProcess;
let oracle: FenceOracle;
/** The old primaries started again (empty) on their ports. */
const restarted: RedisServerProcess[] = [];

beforeAll(async () => {
  [group, oracleServer] = await Promise.all([
    startSentinel({ replicas: 1, sentinels: 3, downAfterMs: 1_000, failoverTimeoutMs: 5_000 }),
    startRedis(),
  ]);
  oracle = new FenceOracle(oracleServer.url);
}, 60_000);

afterAll(async () => {
  await oracle?.close();
  await Promise.allSettled([group?.stop(), oracleServer?.stop(), ...restarted.map((s) => s.stop())]);
}, 60_000);

/**
 * Watches the old primary once it is back empty: the lock scripts it ran for clients while it still
 * answered as a master (Redis 7 replicates a script's effects, not the script, so every script call
 * it counts came from a client; as a replica it fails the lock scripts with READONLY, counted as failed).
 * Any such script means a client was sent to it, a master of nothing, beside the promoted one. The
 * watch ends when Sentinel has made it a replica: a later promotion of it is legitimate.
 */
function watchScriptsAsMaster(server: RedisServerProcess): { stop: () => Promise<number> } {
  let ran = 0;
  let stopped = false;
  const read = async (): Promise<void> => {
    const role = await redisCommand(server.port, ['ROLE'], { timeoutMs: 1_000 });
    if (!Array.isArray(role) || role[0] !== 'master') {
      stopped = Array.isArray(role); // a replica now (a failed read is tried again)
      return;
    }
    const stats = String(await redisCommand(server.port, ['INFO', 'commandstats'], { timeoutMs: 1_000 }));
    let succeeded = 0;
    for (const m of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),.*failed_calls=(\d+)/gm))
      succeeded += Number(m[1]) - Number(m[2]);
    ran = Math.max(ran, succeeded);
  };
  const loop = (async () => {
    while (!stopped) {
      await read().catch(() => undefined); // a missed read leaves the last count; the next one catches up
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return ran;
    },
  };
}

/** The master each sentinel names now (null: it did not answer). */
function sentinelMasters(): Promise<(number | null)[]> {
  return Promise.all(
    group.sentinels.map(async (s) => {
      const reply = await redisCommand(s.port, ['SENTINEL', 'get-master-addr-by-name', group.masterName], {
        timeoutMs: 500,
      }).catch(() => null);
      return Array.isArray(reply) ? Number(reply[1]) : null;
    }),
  );
}

/** Kills the master (-9), waits for the promotion, and 0.5 s later starts an empty master on its port. */
async function failOver(servers: Map<number, RedisServerProcess>): Promise<Failover> {
  const victimPort = (await group.currentMaster()).port;
  const victim = servers.get(victimPort)!;
  const killedAt = historyEpochMs();
  victim.kill('SIGKILL');
  await victim.exited;
  // The promotion: the first sentinel that names another master (clients can find it from then on).
  const sentinelsSaid = await waitUntil(
    async () => {
      const said = await sentinelMasters();
      return said.some((port) => port !== null && port !== victimPort) ? said : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 10, description: `a sentinel to promote a replica of ${victimPort}` },
  );
  const promotedAt = historyEpochMs();
  await sleep(RESTART_AFTER_PROMOTION_MS);
  // No --replicaof: it answers as a master with no data until Sentinel turns it into a replica.
  const fresh = await startRedis({ port: victimPort });
  restarted.push(fresh);
  servers.set(victimPort, fresh);
  const { stop } = watchScriptsAsMaster(fresh);
  return { killedAt, promotedAt, sentinelsSaid, restartedAt: historyEpochMs(), scriptsAsMaster: stop };
}

function spawnHistoryWorker(name: string): WorkerProcess<HistoryMessage> {
  return spawnWorker<HistoryMessage>(workerPath('history-worker.ts'), {
    env: {
      REDIS_URL: 'unused: ENGINE_OPTIONS names the sentinels',
      ORACLE_URL: oracleServer.url,
      ENGINE_OPTIONS: JSON.stringify({
        ...ENGINE_OPTIONS,
        redis: { sentinels: group.sentinelAddresses, name: group.masterName },
      }),
      WAIT_MS: String(WAIT_MS),
      PROCESS: name,
      KEYS: KEYS.join(','),
      CALLERS: JSON.stringify(CALLERS),
      HOLDS: JSON.stringify(HOLDS),
    },
  });
}

describe('issue 43: back-to-back Sentinel failovers, the old primary back empty each time', () => {
  it('grants every process a lock soon after each promotion, one holder at a time outside the kills', async () => {
    const servers = new Map([group.master, ...group.replicas].map((s) => [s.port, s]));
    const workers = PROCESSES.map(spawnHistoryWorker);
    const failovers: Failover[] = [];
    let events: Recorded[] = [];
    let endedAt = 0;
    /** Per failover: lock scripts the old primary, back empty, ran for clients as a master. */
    let splitBrain: number[] = [];
    try {
      await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
      for (const w of workers) w.send({ type: 'go' });
      await sleep(BEFORE_KILL_MS);
      failovers.push(await failOver(servers));
      // (A slow promotion moves the second kill so that (a) can be checked in full.)
      const secondKillAt = Math.max(
        failovers[0]!.killedAt + BETWEEN_KILLS_MS,
        failovers[0]!.promotedAt + EACH_GRANTED_WITHIN_MS,
      );
      await sleep(Math.max(0, secondKillAt - historyEpochMs()));
      failovers.push(await failOver(servers));
      await sleep(AFTER_LAST_RESTART_MS);
      endedAt = historyEpochMs();
      events = await collectHistories(workers);
    } finally {
      splitBrain = await Promise.all(failovers.map((f) => f.scriptsAsMaster()));
      await Promise.all(workers.map(stopHistoryWorker));
    }
    const unhandled = workers.flatMap((w) => w.messages.filter((m) => m.type === 'unhandled'));
    const t0 = failovers[0]!.killedAt;
    const since = (at: number): number => round1(at - t0);
    const of = <T extends HistoryEvent['type']>(type: T): Recorded<T>[] => eventsOf(events, type);
    const grants = of('grant').sort((a, b) => a.at - b.at);
    const idOf = (e: { process: string; caller: number; key: string; token: number }): string =>
      `${e.process}/${e.caller} ${e.key} #${e.token}`;

    // (a) The first grant of each process after each promotion, until the next kill (or the end).
    const firstGrantMs = failovers.map((f, i) => {
      const until = failovers[i + 1]?.killedAt ?? endedAt;
      return Object.fromEntries(
        PROCESSES.map((p) => {
          const g = grants.find((x) => x.process === p && x.at > f.promotedAt && x.at < until);
          return [p, g ? round1(g.at - f.promotedAt) : null];
        }),
      );
    });
    const late = firstGrantMs.flatMap((perProcess, i) =>
      Object.entries(perProcess)
        .filter(([, ms]) => ms === null || ms > EACH_GRANTED_WITHIN_MS)
        .map(
          ([p, ms]) =>
            `failover ${i + 1}: ${p} ${ms === null ? 'never granted' : `first granted after ${ms} ms`}`,
        ),
    );

    const noneSoon = firstGrantMs.flatMap((perProcess, i) => {
      const first = Math.min(...Object.values(perProcess).map((ms) => ms ?? Number.POSITIVE_INFINITY));
      return first <= ANY_GRANT_WITHIN_MS
        ? []
        : [`failover ${i + 1}: first grant of any process after ${first} ms`];
    });

    // (b) Each hold, from its grant to its release or loss signal, against the later grants of its key.
    const ends = new Map<string, number>();
    for (const e of [...of('release'), ...of('loss')]) {
      const id = idOf(e);
      ends.set(id, Math.min(ends.get(id) ?? Number.POSITIVE_INFINITY, e.at));
    }
    const overlaps: string[] = [];
    const acrossKill: string[] = [];
    /** Overlaps after a kill whose old primary, back empty, ran lock scripts for clients: a split brain. */
    const inSplitBrain: string[] = [];
    for (const [i, g] of grants.entries()) {
      const end = ends.get(idOf(g)) ?? endedAt;
      for (const next of grants.slice(i + 1)) {
        if (next.at >= end) break;
        if (next.key !== g.key) continue;
        const text = `${idOf(g)} held ${since(g.at)}..${since(end)} when ${idOf(next)} was granted at ${since(next.at)}`;
        const afterKill = failovers.filter((f) => f.killedAt < next.at).length - 1;
        if (failovers.some((f) => g.at < f.killedAt && next.at > f.killedAt)) acrossKill.push(text);
        else if (afterKill >= 0 && splitBrain[afterKill]! > 0) inSplitBrain.push(text);
        else overlaps.push(text);
      }
    }

    // (c) Tokens per key in the order of the grants.
    const tokenRegressions = tokenRegressionsOf(grants, (g) => `${idOf(g)} at ${since(g.at)}`);

    // (d) The fenced writes: refusals only of stale tokens, acceptances in token order, as the oracle counted.
    const writes = of('write');
    const fenceViolations = fenceViolationsOf(writes);
    const acceptedByOracle: Record<string, number> = {};
    const acceptedInHistory: Record<string, number> = {};
    for (const w of writes) {
      acceptedInHistory[w.resource] = (acceptedInHistory[w.resource] ?? 0) + (w.accepted ? 1 : 0);
      acceptedByOracle[w.resource] ??= (await oracle.state(w.resource)).accepted;
    }

    // (e)
    const acquireErrors = of('acquireError');
    const otherErrors = acquireErrors
      .filter((e) => e.name !== 'LockRedisError' && e.name !== 'LockNotAcquiredError')
      .map((e) => `${e.process}/${e.caller} ${e.key} at ${since(e.at)}: ${e.name}: ${e.message}`);
    const unanswered = (from: number, to: number): number =>
      acquireErrors.filter((e) => e.at > from && e.at < to && /did not answer/.test(e.message)).length;

    const measured = {
      title: `${PROCESSES.length} processes x ${CALLERS.length} callers on ${KEYS.length} keys, Sentinel primary killed (-9) twice, back empty 0.5 s after each promotion`,
      anyGrantWithinMs: ANY_GRANT_WITHIN_MS,
      eachGrantedWithinMs: EACH_GRANTED_WITHIN_MS,
      failovers: failovers.map((f, i) => ({
        killedAtMs: since(f.killedAt),
        promotedAfterKillMs: round1(f.promotedAt - f.killedAt),
        sentinelsSaid: f.sentinelsSaid,
        restartedAfterPromotionMs: round1(f.restartedAt - f.promotedAt),
        firstGrantAfterPromotionMs: firstGrantMs[i],
        grantsUntilNextKill: grants.filter(
          (g) => g.at > f.promotedAt && g.at < (failovers[i + 1]?.killedAt ?? endedAt),
        ).length,
        didNotAnswerAfterPromotion: unanswered(f.promotedAt, failovers[i + 1]?.killedAt ?? endedAt),
      })),
      grants: grants.length,
      overlapsAcrossKill: acrossKill.length,
      scriptsRunByOldPrimaryBackEmpty: splitBrain,
      overlapsInSplitBrain: inSplitBrain.length,
      writes: writes.length,
      refusedWrites: writes.filter((w) => !w.accepted).length,
      acquireErrors: acquireErrors.length,
    };
    figures.record('43-sentinel-back-to-back-failovers', measured);
    console.log(
      `sentinel failovers (times from the first kill, ms): ${JSON.stringify({ ...measured, noneSoon, late, acrossKill, inSplitBrain }, null, 2)}`,
    );

    expect(unhandled).toEqual([]);
    expect(otherErrors).toEqual([]);
    // (a)
    expect(noneSoon).toEqual([]);
    expect(late).toEqual([]);
    // (b)
    expect(overlaps).toEqual([]);
    // (c)
    expect(tokenRegressions).toEqual([]);
    // (d)
    expect(fenceViolations).toEqual([]);
    expect(acceptedByOracle).toEqual(acceptedInHistory);
    expect(writes.filter((w) => w.accepted).length).toBeGreaterThan(0);
  }, 150_000);
});
