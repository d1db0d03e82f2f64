/*
 * Sentinel: 1 master + 2 replicas + 3 sentinels (real processes), one group and one fencing-oracle
 * server for the whole file. Failovers are real: the master is SIGKILLed and a sentinel promotes
 * a replica. The failover tests run last and leave the group with a new master.
 */
import Redis from 'ioredis';
import {
  createLockEngine,
  LockEngine,
  LockHandle,
  LockRedisError,
  LockReplicationError,
} from '../../lib/core';
import type { CreateLockEngineOptions, LockEventMap } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { startSentinel, type RedisSentinelTopology } from '../support/redis-topologies';
import type { WorkerProcess } from '../support/spawn-worker';
import { sleep, waitUntil } from '../support/wait';
import { recordFigures } from '../support/topology-figures';
import { FenceOracle } from '../support/fence-oracle';
import { expectFailoverUnderLoad } from '../support/failover-under-load';
import {
  expectBaselineRound,
  type LockWorkerMessage,
  spawnLockWorkers,
  stopLockWorkers,
} from '../support/topology-workers';

jest.setTimeout(180_000);

const PREFIX = 'topo:';
const keys = new KeySpace(PREFIX);

let group: RedisSentinelTopology;
let oracleServer: RedisServerProcess;
let oracle: FenceOracle;
let workers: WorkerProcess<LockWorkerMessage>[] = [];
let engines: LockEngine[] = [];

/** An engine on the Sentinel-managed master (ioredis sentinel options; the engine owns the client). */
function engine(options: Partial<CreateLockEngineOptions> = {}): LockEngine {
  const e = createLockEngine({
    redis: { sentinels: group.sentinelAddresses, name: group.masterName },
    keyPrefix: PREFIX,
    ...options,
  });
  engines.push(e);
  return e;
}

const master = async (): Promise<RedisServerProcess> =>
  group.serverByPort((await group.currentMaster()).port)!;
const dataNodes = (): RedisServerProcess[] => [group.master, ...group.replicas];

beforeAll(async () => {
  [group, oracleServer] = await Promise.all([startSentinel({ replicas: 2, sentinels: 3 }), startRedis()]);
  oracle = new FenceOracle(oracleServer.url);
  workers = await spawnLockWorkers(3, {
    topology: { kind: 'sentinel', sentinels: group.sentinelAddresses, name: group.masterName },
    oracleUrl: oracleServer.url,
    callers: 2,
    holdMs: 2,
  });
});

afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});

afterAll(async () => {
  await stopLockWorkers(workers);
  await oracle?.close();
  await Promise.all([group?.stop(), oracleServer?.stop()]);
});

describe('Sentinel (1 master + 2 replicas + 3 sentinels)', () => {
  it('keeps mutual exclusion and strictly increasing tokens across 3 OS processes', async () => {
    await expectBaselineRound(workers, oracle, 'sentinel', {
      scope: 'se-baseline',
      grants: 200,
      figures: 'baseline: 3 processes x 2 callers',
    });
  });

  it("reports replica acknowledgements (WAIT) on the handle and in the 'acquired' event", async () => {
    const events: LockEventMap['acquired'][0][] = [];
    const e = engine({ replicas: { count: 2, timeoutMs: 2000 } });
    e.events.on('acquired', (event) => events.push(event));
    await e.using('acked', { leaseMs: 10_000 }, async (lock) => {
      expect(lock.replicaAcks).toBe(2);
      const inner = await e.acquire('acked'); // a re-entry writes nothing new worth a WAIT
      expect(inner.replicaAcks).toBe(2);
      await inner.release();
    });
    expect(events.map((x) => [x.reentered, x.replicaAcks])).toEqual([
      [false, 2],
      [true, undefined],
    ]);
    const plain = await engine().acquire('not-acked', { leaseMs: 10_000 });
    expect(plain.replicaAcks).toBeUndefined();
    await plain.release();
  });

  it('keeps per-process cohorts with replica acknowledgements: a hand-off carries the acked grant', async () => {
    // A wide time budget: the hand-off below must not depend on this machine's speed.
    const e = engine({ replicas: { count: 2, timeoutMs: 2000 }, cohort: { budgetMs: 10_000 } });
    const handed: boolean[] = [];
    e.events.on('acquired', (event) => handed.push(event.handedOver === true));
    const first = await e.acquire('acked-cohort');
    const second = e.acquire('acked-cohort', { waitMs: 5_000 });
    await sleep(50); // the second waits locally behind the first
    await first.release();
    const next = await second;
    expect(handed).toEqual([false, true]);
    expect(next.fencingToken).toBe(first.fencingToken + 1);
    expect(next.replicaAcks).toBe(2);
    await next.release();
  });

  it("refuses and releases a grant that too few replicas acknowledged (policy 'require')", async () => {
    const e = engine({ replicas: { count: 3, timeoutMs: 200, policy: 'require' } }); // there are only 2
    const error = await e.acquire('required', { leaseMs: 10_000 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockReplicationError);
    expect(error).toBeInstanceOf(LockRedisError);
    expect(error).toMatchObject({ name: 'LockReplicationError', acks: 2, required: 3, key: 'required' });
    expect(await redisCommand((await master()).port, ['EXISTS', keys.names('required').lock])).toBe(0);
    // With enough replicas the same policy grants.
    const ok = await engine({ replicas: { count: 2, timeoutMs: 2000, policy: 'require' } }).acquire(
      'required',
    );
    expect(ok.replicaAcks).toBe(2);
    await ok.release();
  });

  it('rides out a master failover under load: progress resumes, tokens never regress', async () => {
    const victim = await master();
    await expectFailoverUnderLoad({
      workers,
      oracle,
      scope: 'se-failover',
      key: 'failover',
      victim,
      promoted: () => group.waitForFailover(victim.port, 60_000),
      figures: { file: 'sentinel', name: 'failover under load: master killed' },
    });
    // The old master comes back empty and is turned into a replica of the new one.
    await victim.restart();
    await group.waitForReplicas(2);
  });

  it('loses grants no replica received when the master dies; WAIT reports them and require refuses them', async () => {
    await group.waitForReplicas(2);
    const old = await master();
    const replicas = dataNodes().filter((n) => n !== old);
    // Holders learn of a loss within a second or two: short watchdog leases.
    const tuning = { watchdogLeaseMs: 3000, renewEveryMs: 1000 };
    const plain = engine(tuning);
    const report = engine({ ...tuning, replicas: { count: 1, timeoutMs: 300 } });
    const require = engine({ ...tuning, replicas: { count: 1, timeoutMs: 300, policy: 'require' } });
    const plainLocks: LockHandle[] = [];
    const reportLocks: LockHandle[] = [];
    await plain.acquire('warm-up').then((l) => l.release()); // connections ready before the replicas freeze
    await report.acquire('warm-up').then((l) => l.release());
    await require.acquire('warm-up').then((l) => l.release());

    // Replication lag, made visible: the replicas stop reading and a 32 MB write fills the link, so
    // the grants that follow sit in the master's output buffer, acknowledged to the clients only.
    for (const r of replicas) r.pause();
    const filler = new Redis(old.url, { maxRetriesPerRequest: 1 });
    await filler.set('topo:filler', Buffer.alloc(32 * 1024 * 1024, 120));
    filler.disconnect();
    for (let i = 0; i < 5; i++) plainLocks.push(await plain.acquire(`lag-plain-${i}`));
    for (let i = 0; i < 5; i++) reportLocks.push(await report.acquire(`lag-report-${i}`));
    const refused = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        require.acquire(`lag-require-${i}`).then(
          () => 'granted',
          (err: unknown) => err,
        ),
      ),
    );

    old.kill();
    await old.exited;
    for (const r of replicas) r.resume();
    const promoted = await group.waitForFailover(old.port, 60_000);
    const exists = async (key: string) =>
      (await redisCommand(promoted.port, ['EXISTS', keys.names(key).lock])) === 1;
    const survived = async (prefix: string) => {
      let n = 0;
      for (let i = 0; i < 5; i++) if (await exists(`${prefix}-${i}`)) n++;
      return n;
    };
    const plainSurvived = await survived('lag-plain');
    const reportSurvived = await survived('lag-report');
    const requireSurvived = await survived('lag-require');
    // Every holder whose grant did not survive is told: its signal aborts (watchdog finds the lock gone).
    await waitUntil(
      () =>
        [...plainLocks, ...reportLocks].filter((l) => l.signal.aborted).length >=
        10 - plainSurvived - reportSurvived,
      { timeoutMs: 30_000, description: 'the holders of lost grants to be told' },
    );
    recordFigures(
      'sentinel',
      'failover with replication lag (replicas frozen, 32 MB backlog, 5 grants per policy)',
      {
        noWait: {
          granted: 5,
          lostAfterFailover: 5 - plainSurvived,
          holdersTold: plainLocks.filter((l) => l.signal.aborted).length,
        },
        waitReport: {
          granted: 5,
          replicaAcks: reportLocks.map((l) => l.replicaAcks),
          lostAfterFailover: 5 - reportSurvived,
          holdersTold: reportLocks.filter((l) => l.signal.aborted).length,
        },
        waitRequire: {
          granted: 0,
          refused: refused.filter((r) => r instanceof LockReplicationError).length,
          lostAfterFailover: 0,
        },
      },
    );
    expect(reportLocks.map((l) => l.replicaAcks)).toEqual([0, 0, 0, 0, 0]);
    expect(refused.every((r) => r instanceof LockReplicationError)).toBe(true);
    expect(requireSurvived).toBe(0);
    expect(plainSurvived + reportSurvived).toBeLessThan(10); // the lag really cost grants: the hazard WAIT reports
    await old.restart();
  });
});
