import { Inject, Injectable } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import type { CronJob } from 'cron';
import {
  DISTRIBUTED_LOCK_METADATA,
  DistributedLock,
  DistributedLockModule,
  DistributedLockService,
} from '../../lib';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import { Barrier, track } from '../support/barrier';
import { closeApps, startApp } from '../support/nest-env';

const REPLICA = 'REPLICA';
// Far from any test run: the jobs are registered and started but never fire by themselves.
const YEARLY = '0 0 3 1 1 *';
const ran: string[] = [];
let barrier: Barrier | undefined;

@Injectable()
class ReportJobs {
  constructor(@Inject(REPLICA) private readonly replica: string) {}

  // @DistributedLock applied after @Cron: the cron metadata must move to the wrapper.
  // minHoldMs: 0 — these tests fire ticks by hand in quick succession (the default would keep the
  // lock for half the period, so that replicas' timers for one tick cannot run it twice).
  @DistributedLock({ key: 'cron:nightly-report', onBusy: 'skip', minHoldMs: 0 })
  @Cron(YEARLY, { name: 'nightly-report', waitForCompletion: true })
  async nightlyReport(): Promise<string> {
    ran.push(`report:${this.replica}`);
    await barrier?.wait();
    return this.replica;
  }

  // The other order: @Cron lands on the wrapper directly.
  @Cron(YEARLY, { name: 'cleanup', waitForCompletion: true })
  @DistributedLock({ key: 'cron:cleanup', onBusy: 'skip', minHoldMs: 0 })
  async cleanup(): Promise<string> {
    ran.push(`cleanup:${this.replica}`);
    await barrier?.wait();
    return this.replica;
  }
}

let server: RedisServerProcess;
let replicaA: INestApplication;
let replicaB: INestApplication;

/** One replica of the service: its own app, its own lock service and connection, the same Redis. */
const startReplica = (name: string) =>
  startApp({
    imports: [
      ScheduleModule.forRoot(),
      DistributedLockModule.forRoot({ redis: server.url, keyPrefix: 'cron-test:' }),
    ],
    providers: [ReportJobs, { provide: REPLICA, useValue: name }],
  });

beforeAll(async () => {
  server = await startRedis();
  replicaA = await startReplica('a');
  replicaB = await startReplica('b');
});

afterAll(async () => {
  await closeApps(replicaA, replicaB);
  await server?.stop();
});

beforeEach(() => {
  ran.length = 0;
  barrier = new Barrier();
});

afterEach(() => barrier?.open());

describe.each([
  ['nightlyReport', 'nightly-report', 'report'],
  ['cleanup', 'cleanup', 'cleanup'],
] as const)(
  '@DistributedLock({ onBusy: "skip" }) on @Cron method %s in two replicas',
  (method, jobName, tag) => {
    it('keeps the @Cron registration in every replica', () => {
      for (const app of [replicaA, replicaB]) {
        const job: CronJob = app.get(SchedulerRegistry).getCronJob(jobName);
        expect(job).toBeDefined();
        expect(Reflect.hasMetadata(DISTRIBUTED_LOCK_METADATA, ReportJobs.prototype[method])).toBe(true);
      }
    });

    it('runs the job in exactly one replica when both fire at once', async () => {
      const a = track(replicaA.get(ReportJobs)[method]());
      const b = track(replicaB.get(ReportJobs)[method]());
      await waitUntil(() => barrier!.entered === 1 && (a.settled() || b.settled()), {
        description: 'one replica inside the job and the other one done',
      });
      const skipped = a.settled() ? a : b;
      await expect(skipped.promise).resolves.toBeUndefined();
      barrier!.open();
      const winner = skipped === a ? 'b' : 'a';
      await expect((skipped === a ? b : a).promise).resolves.toBe(winner);
      expect(ran).toEqual([`${tag}:${winner}`]);
    });

    it('skips a scheduled tick in one replica while the other one runs the job', async () => {
      const acquiredInA: string[] = [];
      const onAcquired = ({ key }: { key: string }) => acquiredInA.push(key);
      replicaA.get(DistributedLockService).events.on('acquired', onAcquired);
      try {
        const running = replicaB.get(ReportJobs)[method]();
        await waitUntil(() => barrier!.entered === 1, { description: 'replica b inside the job' });
        await replicaA.get(SchedulerRegistry).getCronJob(jobName).fireOnTick();
        expect(ran).toEqual([`${tag}:b`]);
        barrier!.open();
        await expect(running).resolves.toBe('b');
        // With b done, a's next tick runs — through a's own lock service.
        await replicaA.get(SchedulerRegistry).getCronJob(jobName).fireOnTick();
        expect(ran).toEqual([`${tag}:b`, `${tag}:a`]);
        expect(acquiredInA).toEqual([`cron:${jobName}`]);
      } finally {
        replicaA.get(DistributedLockService).events.off('acquired', onAcquired);
      }
    });
  },
);
