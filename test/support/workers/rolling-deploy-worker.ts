/*
 * One OS process of the rolling-deploy spec (test/faults/rolling-deploy.spec.ts): it runs the library
 * whose lib/ folder is LIB_DIR (this checkout's, or an older release's extracted beside it; either
 * loads the repository's node_modules), so that processes of two releases share one Redis and one key.
 *
 * Protocol (worker-io.ts): {type:'ready', pid} once connected; then, for each {type:'round', ...Round}
 * from the parent, {type:'round-ready', id}, and after the parent's {type:'go', id} one
 * {type:'round-done', ...RoundReport}; {type:'exit'} ends the process once its rounds are done. A round
 * opens an engine of its own (`createLockEngine({ redis: REDIS_URL, ...engine })`), runs its loops and
 * closes the engine; rounds (each on a key of its own) run side by side, so one process serves every
 * kind and lease mode at once.
 *
 * Each of `callers` loops does `iterations` critical sections of the lock `key` (options `lock`): a
 * read-modify-write of the counter (GET, a turn of the event loop, SET value + 1) through a data client
 * of its own, recording [value read, fencing token]. Two holders granted at once would read the same
 * value. Around it, MULTI INCR/GET of `<inside>:w` and `<inside>:r` marks the section: a writer that
 * finds another writer or a reader inside (or a reader that finds a writer) counts an overlap, whoever
 * entered second. `readers` loops (read-write lock) take `mode: 'read'` holds of the same key the
 * same way. `holdMs` > 0: the first section of each loop holds that long (watchdog renewals happen).
 * Env: LIB_DIR, REDIS_URL.
 */
import * as path from 'path';
import Redis from 'ioredis';
import { emit, onParentMessage, requiredEnv } from '../worker-io';

/** What the parent asks for in one round. */
export interface Round {
  id: string;
  key: string;
  /** Redis key of the counter the writers read-modify-write. */
  counter: string;
  /** Prefix of the occupancy counters `<inside>:w` and `<inside>:r`. */
  inside: string;
  lock: Record<string, unknown>;
  engine: Record<string, unknown>;
  callers: number;
  iterations: number;
  readers: number;
  holdMs: number;
}

/** What one process saw in one round. */
export interface RoundReport {
  type: 'round-done';
  id: string;
  pid: number;
  /** One entry per writer grant: [counter value read, fencing token]. */
  grants: [number, number][];
  reads: number;
  overlaps: number;
  /** Holders whose signal was aborted (lock lost) by the end of their section. */
  lost: number;
  timeouts: number;
  /** Errors other than LockNotAcquiredError, with whether this process had been granted anything yet. */
  errors: { message: string; beforeFirstGrant: boolean }[];
}

interface Handle {
  readonly fencingToken: number;
  readonly signal: AbortSignal;
}
interface Engine {
  using<T>(key: string, options: Record<string, unknown>, fn: (lock: Handle) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
type CreateLockEngine = (options: Record<string, unknown>) => Engine;

const url = requiredEnv('REDIS_URL');
const libDir = path.resolve(requiredEnv('LIB_DIR'));
const data = new Redis(url, { maxRetriesPerRequest: 3 });
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const describeError = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * One round: opens the engine and warms it up (connection, scripts) with an uncontended lock of a key
 * of its own, emits {type:'round-ready', id}, waits for `go` (the parent sends it once every process
 * is ready, so both releases start contending together), runs the loops and closes the engine.
 */
async function runRound(
  createLockEngine: CreateLockEngine,
  round: Round,
  go: Promise<void>,
): Promise<RoundReport> {
  const report: RoundReport = {
    type: 'round-done',
    id: round.id,
    pid: process.pid,
    grants: [],
    reads: 0,
    overlaps: 0,
    lost: 0,
    timeouts: 0,
    errors: [],
  };
  const [writersInside, readersInside] = [`${round.inside}:w`, `${round.inside}:r`];
  const failed = (error: unknown): void => {
    report.errors.push({ message: describeError(error), beforeFirstGrant: report.grants.length === 0 });
  };
  const options = { waitMs: 120_000, ...round.lock };
  let engine: Engine | undefined;
  try {
    engine = createLockEngine({ redis: url, ...round.engine });
    await engine.using(`${round.key}:warm-up:${process.pid}`, options, tick);
  } catch (error) {
    failed(error);
  }
  emit({ type: 'round-ready', id: round.id });
  await go;
  if (report.errors.length > 0 || !engine) {
    await engine?.close().catch(failed);
    return report;
  }
  const opened = engine;

  const write = async (lock: Handle, hold: boolean): Promise<void> => {
    const [[, writers], [, readers]] = (await data.multi().incr(writersInside).get(readersInside).exec()) as [
      [null, number],
      [null, string | null],
    ];
    if (writers !== 1 || Number(readers ?? 0) !== 0) report.overlaps++;
    const value = Number((await data.get(round.counter)) ?? '0');
    await (hold ? sleep(round.holdMs) : tick());
    await data.set(round.counter, String(value + 1));
    report.grants.push([value, lock.fencingToken]);
    await data.decr(writersInside);
    if (lock.signal.aborted) report.lost++;
  };
  const read = async (lock: Handle): Promise<void> => {
    const [, [, writers]] = (await data.multi().incr(readersInside).get(writersInside).exec()) as [
      [null, number],
      [null, string | null],
    ];
    if (Number(writers ?? 0) !== 0) report.overlaps++;
    await tick();
    await data.decr(readersInside);
    report.reads++;
    if (lock.signal.aborted) report.lost++;
  };

  const loop = async (reader: boolean): Promise<void> => {
    for (let i = 0; i < round.iterations; i++) {
      const hold = !reader && i === 0 && round.holdMs > 0;
      try {
        await opened.using(round.key, reader ? { ...options, mode: 'read' } : options, (lock) =>
          reader ? read(lock) : write(lock, hold),
        );
      } catch (error) {
        if ((error as Error)?.name === 'LockNotAcquiredError') {
          report.timeouts++;
          continue;
        }
        failed(error);
        return; // one broken loop says enough; the parent fails the round
      }
    }
  };
  await Promise.all([
    ...Array.from({ length: round.callers }, () => loop(false)),
    ...Array.from({ length: round.readers }, () => loop(true)),
  ]);
  await opened.close().catch(failed);
  return report;
}

async function main(): Promise<void> {
  // Loaded at run time: LIB_DIR names the release under test.
  const core = (await import(path.join(libDir, 'core'))) as { createLockEngine: CreateLockEngine };
  await data.ping();
  const rounds: Promise<void>[] = [];
  const starts = new Map<string, () => void>();
  onParentMessage((message: { type: string } & Partial<Round>) => {
    if (message.type === 'round') {
      const go = new Promise<void>((resolve) => starts.set(message.id!, resolve));
      rounds.push(
        runRound(core.createLockEngine, message as Round, go)
          .then((report) => emit({ ...report }))
          .catch((error: unknown) => emit({ type: 'error', message: describeError(error) })),
      );
    } else if (message.type === 'go') {
      starts.get(message.id!)?.();
    } else if (message.type === 'exit') {
      void Promise.all(rounds).then(async () => {
        await data.quit().catch(() => data.disconnect());
        process.exit();
      });
    }
  });
  emit({ type: 'ready', pid: process.pid, libDir });
}

main().catch((error: unknown) => {
  emit({ type: 'error', message: describeError(error) });
  process.exit(1);
});
