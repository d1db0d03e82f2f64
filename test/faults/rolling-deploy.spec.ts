/**
 * A rolling deploy stays safe (issues 23 and 38): processes of an earlier release (the one before the
 * engine rebuild, ec71799; 0.2.0, d85931c, whose mutex had no hold count `n` and no waiter mark `w`;
 * and 0.3.0, 1fbc023, whose mutex was always a hash: this checkout keeps one hold in a string) and of
 * this checkout's lib/ share one redis-server and one key per round, for every kind
 * and both lease modes (a fixed `leaseMs`; the watchdog, with local cohorts), and take the lock over
 * and over from both sides at once. Each critical section is a read-modify-write of a Redis counter
 * that two holders at once would corrupt (rolling-deploy-worker.ts). Asserted per round:
 *
 *   - 0 lost updates: the counter ends at the number of grants;
 *   - no double grant: the values read are exactly 0..N-1, each once;
 *   - fencing tokens strictly increase in the order of the values read, old and new grants alike;
 *   - no section overlapped another (writers; and readers with writers, for the read-write lock),
 *     no holder lost its lock, no call timed out or failed.
 *
 * The other outcome the issue allows: the new build refuses to start beside the old one. This spec
 * accepts it only in the form of an error whose message names the Redis data layout version
 * (REFUSAL), raised by every new process before its first grant; the old processes must then still
 * exclude each other. A later change of a script or of the data layout is held to the same: keep the
 * old release's processes safe beside it, or add a layout version and refuse.
 *
 * The old lib/ comes from the clone's history (`git archive`, no network) into a git-ignored folder of
 * the repository (so it loads this checkout's node_modules), removed in afterAll.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type Redis from 'ioredis';
import { faultFigures } from '../support/fault-figures';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { spawnWorker, workerPath, type WorkerProcess } from '../support/spawn-worker';
import type { Round, RoundReport } from '../support/workers/rolling-deploy-worker';

// A round's test waits for its round, and the first test of a release for all ten run side by side:
// generous against a loaded machine (a bound on liveness, not on speed).
jest.setTimeout(300_000);

/** The releases a deploy of this checkout may replace, each run beside it in its own rounds. */
const OLD_RELEASES = [
  { commit: 'ec71799', name: 'the release before the engine rebuild' },
  { commit: 'd85931c', name: '0.2.0, the mutex layout before the hold count and waiter mark' },
  { commit: '1fbc023', name: '0.3.0, the mutex always a hash (one hold is a string now)' },
];
const REPO = path.resolve(__dirname, '..', '..');
/** Git-ignored (.gitignore): where old releases' lib/ folders are extracted while the spec runs. */
const RELEASES_DIR = path.join(REPO, '.releases');
const NEW_LIB = path.join(REPO, 'lib');
/** The only refusal accepted instead of exclusion (see the header). */
const REFUSAL = /layout version/i;

const PROCESSES_PER_SIDE = 2;
const CALLERS = 2;
const ITERATIONS = 30;
/** Fixed-lease rounds: long enough that no section outlives it (this is about exclusion, not expiry). */
const LEASE_MS = 10_000;
/** Watchdog rounds: renewals every 100 ms; the first section of each loop holds HOLD_MS, so both sides renew. */
const WATCHDOG = { watchdogLeaseMs: 3000, renewEveryMs: 100 };
const HOLD_MS = 250;

type Side = 'old' | 'new';
interface Kind {
  name: string;
  lock: Record<string, unknown>;
  engine?: Record<string, unknown>;
  readers?: number;
}
const KINDS: Kind[] = [
  { name: 'mutex', lock: {} },
  { name: 'token lock', lock: { reentrant: false } },
  { name: 'read-write lock (writers, and a reader per process)', lock: { mode: 'write' }, readers: 1 },
  { name: 'fair lock (fair cohorts)', lock: { fair: true }, engine: { cohort: { fair: true } } },
  { name: 'semaphore of limit 1', lock: { limit: 1 } },
];
const LEASES = [
  { name: `fixed leaseMs ${LEASE_MS}`, lock: { leaseMs: LEASE_MS }, engine: {}, holdMs: 0 },
  { name: 'watchdog', lock: {}, engine: WATCHDOG, holdMs: HOLD_MS },
];

/** The round of `kind` under `lease`: a key, a counter and occupancy marks of its own. */
function roundOf(kind: Kind, lease: (typeof LEASES)[number]): Round {
  const tag = `rolling:${KINDS.indexOf(kind)}:${LEASES.indexOf(lease)}`;
  return {
    id: `${kind.name} / ${lease.name}`,
    key: `${tag}:lock`,
    counter: `${tag}:counter`,
    inside: `${tag}:inside`,
    lock: { ...kind.lock, ...lease.lock },
    engine: { ...kind.engine, ...lease.engine },
    callers: CALLERS,
    iterations: ITERATIONS,
    readers: kind.readers ?? 0,
    holdMs: lease.holdMs,
  };
}

/** Extracts `commit`'s lib/ with `git archive`; fails with what to do when the clone lacks it. */
function extractLib(commit: string): string {
  const found = spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: REPO, encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      `commit ${commit} (an earlier release, which this spec runs beside this ` +
        `checkout's lib/) is not in this clone's history: \`git cat-file -e ${commit}^{commit}\` ` +
        `failed (${(found.stderr || found.error?.message || '').trim()}). A shallow clone lacks it: ` +
        `run \`git fetch --unshallow\` or use a full clone.`,
    );
  }
  fs.mkdirSync(RELEASES_DIR, { recursive: true });
  const dir = fs.mkdtempSync(path.join(RELEASES_DIR, `${commit}-`));
  const archive = spawnSync('git', ['archive', '--format=tar', commit, 'lib'], {
    cwd: REPO,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit} lib failed: ${archive.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar -x of ${commit}'s lib/ failed: ${untar.stderr}`);
  return path.join(dir, 'lib');
}

function removeReleases(libDir: string | undefined): void {
  if (libDir) fs.rmSync(path.dirname(libDir), { recursive: true, force: true });
  // Another run's release may still be there (concurrent runs); the folder goes with the last one.
  if (fs.existsSync(RELEASES_DIR) && fs.readdirSync(RELEASES_DIR).length === 0) fs.rmdirSync(RELEASES_DIR);
}

/** A new process refused to run beside the old release, in the one form accepted. */
const refused = (report: RoundReport): boolean =>
  report.grants.length === 0 &&
  report.errors.length > 0 &&
  report.errors.every((e) => e.beforeFirstGrant && REFUSAL.test(e.message));

describe.each(OLD_RELEASES)('rolling deploy: $name ($commit) and this checkout on one Redis', (release) => {
  const figures = faultFigures();
  /** How often the holder changed from one release to the other, per round (both releases running). */
  const switchesPerRound: number[] = [];
  const measured: Record<string, Record<string, number>> = {};
  let redis: RedisServerProcess;
  let admin: Redis;
  let oldLib: string | undefined;
  const workers: { side: Side; name: string; process: WorkerProcess }[] = [];
  type Reports = { side: Side; name: string; process: WorkerProcess; report: RoundReport }[];
  /** Each round's reports, one per process, by round id. */
  const reportsOf = new Map<string, Promise<Reports>>();

  beforeAll(async () => {
    oldLib = extractLib(release.commit);
    redis = await startRedis();
    admin = redisClient(redis.url);
    for (const [side, libDir] of [
      ['old', oldLib],
      ['new', NEW_LIB],
    ] as const) {
      for (let i = 1; i <= PROCESSES_PER_SIDE; i++) {
        const worker = spawnWorker(workerPath('rolling-deploy-worker.ts'), {
          env: { LIB_DIR: libDir, REDIS_URL: redis.url },
        });
        workers.push({ side, name: `${side}-${i}`, process: worker });
      }
    }
    // The first start of the old release transpiles its lib/ (ts-register's cache is then warm).
    await Promise.all(workers.map((w) => w.process.waitForMessage((m) => m.type === 'ready', 90_000)));
    // Every round at once, each on a key of its own (the tests below take their round's reports): the
    // rounds mostly wait on Redis and on each other's holds, so side by side they take the time of one.
    const rounds = LEASES.flatMap((lease) => KINDS.map((kind) => roundOf(kind, lease)));
    for (const round of rounds) for (const w of workers) w.process.send({ type: 'round', ...round });
    await Promise.all(
      rounds.flatMap((round) =>
        workers.map((w) =>
          w.process.waitForMessage((m) => m.type === 'round-ready' && m.id === round.id, 60_000),
        ),
      ),
    );
    for (const round of rounds) {
      const done = Promise.all(
        workers.map(async (w) => ({
          ...w,
          report: await w.process.waitForMessage<RoundReport>(
            (m) => m.type === 'round-done' && m.id === round.id,
            300_000,
          ),
        })),
      );
      // Awaited by the round's test; a failure is that test's, not an unhandled rejection meanwhile.
      done.catch(() => undefined);
      reportsOf.set(round.id, done);
    }
    for (const round of rounds) for (const w of workers) w.process.send({ type: 'go', id: round.id });
  }, 300_000);

  afterAll(async () => {
    for (const w of workers) w.process.send({ type: 'exit' });
    await Promise.all(workers.map((w) => w.process.stop(5000)));
    if (admin) await closeClient(admin);
    await redis?.stop();
    removeReleases(oldLib);
    if (Object.keys(measured).length > 0) {
      figures.record(`rolling-deploy-${release.commit}`, {
        title: `${release.commit} and this checkout, ${PROCESSES_PER_SIDE} processes each, one key per round`,
        rounds: measured,
      });
    }
  }, 60_000);

  describe.each(LEASES)('$name', (lease) => {
    it.each(KINDS)(
      '$name: no lost update, no double grant, tokens increase across releases',
      async (kind) => {
        const round = roundOf(kind, lease);
        const { id } = round;
        const reports = await reportsOf.get(id)!;

        // The new build may refuse to run beside the old one, all its processes alike; then only the old count.
        const newRefused = reports.filter((r) => r.side === 'new' && refused(r.report));
        expect([0, PROCESSES_PER_SIDE]).toContain(newRefused.length);
        const counted = newRefused.length > 0 ? reports.filter((r) => r.side === 'old') : reports;

        const grants = counted
          .flatMap((r) =>
            r.report.grants.map(([value, token]) => ({ value, token, side: r.side, name: r.name })),
          )
          .sort((a, b) => a.value - b.value);
        const timesRead = new Map<number, number>();
        for (const g of grants) timesRead.set(g.value, (timesRead.get(g.value) ?? 0) + 1);
        const finalCounter = Number((await admin.get(round.counter)) ?? '0');
        let tokenInversions = 0;
        let sideSwitches = 0;
        let processSwitches = 0;
        for (let i = 1; i < grants.length; i++) {
          if (grants[i]!.token <= grants[i - 1]!.token) tokenInversions++;
          if (grants[i]!.side !== grants[i - 1]!.side) sideSwitches++;
          if (grants[i]!.name !== grants[i - 1]!.name) processSwitches++;
        }
        const sum = (field: 'overlaps' | 'lost' | 'timeouts'): number =>
          counted.reduce((n, r) => n + r.report[field], 0);
        const perProcess = CALLERS * ITERATIONS;
        // Whether the sides took turns (old, new, old or the reverse at least) is checked over all
        // rounds below: within one round, cohorts may pass the lock around one side's processes.
        if (newRefused.length === 0) switchesPerRound.push(sideSwitches);
        const summary = {
          errors: counted.flatMap((r) => r.report.errors.map((e) => `${r.name}: ${e.message}`)),
          grantsOld: grants.filter((g) => g.side === 'old').length,
          grantsNew: grants.filter((g) => g.side === 'new').length,
          lostUpdates: grants.length - finalCounter,
          doubleGrants: [...timesRead.values()].reduce((n, times) => n + times - 1, 0),
          valuesNotRead: grants.reduce((n, _, v) => n + (timesRead.has(v) ? 0 : 1), 0),
          tokenInversions,
          overlaps: sum('overlaps'),
          lostLocks: sum('lost'),
          timeouts: sum('timeouts'),
          readerSections: counted.reduce((n, r) => n + r.report.reads, 0),
        };
        expect(summary).toEqual({
          errors: [],
          grantsOld: PROCESSES_PER_SIDE * perProcess,
          grantsNew: newRefused.length > 0 ? 0 : PROCESSES_PER_SIDE * perProcess,
          lostUpdates: 0,
          doubleGrants: 0,
          valuesNotRead: 0,
          tokenInversions: 0,
          overlaps: 0,
          lostLocks: 0,
          timeouts: 0,
          readerSections: counted.length * (kind.readers ?? 0) * ITERATIONS,
        });
        measured[id] = {
          grants: grants.length,
          oldNewSwitches: sideSwitches,
          processSwitches,
          refusedNew: newRefused.length,
        };
      },
    );
  });

  it('old and new processes took turns on the key in most rounds, not one release after the other', () => {
    const interleaved = switchesPerRound.filter((switches) => switches >= 2).length;
    expect(switchesPerRound.length).toBeGreaterThan(0);
    expect(interleaved).toBeGreaterThanOrEqual(Math.ceil(switchesPerRound.length * 0.7));
  });
});
