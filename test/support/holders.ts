import { spawnWorker, workerPath, WorkerProcess } from './spawn-worker';
import type { HolderCommand, HolderMessage } from './workers/holder-protocol';
import { WORKER_ENGINE_OPTIONS } from './fault-engine';

/** A holder worker process (workers/holder-worker.ts) with typed commands. */
export interface Holder {
  readonly process: WorkerProcess<HolderMessage>;
  /** Sends a command. */
  send(command: HolderCommand): void;
  /** Waits for the next message of `type` (about hold `id`, when given). Process start-up is slow on a busy machine: generous default. */
  next<T extends HolderMessage['type']>(
    type: T,
    id?: string,
    timeoutMs?: number,
  ): Promise<Extract<HolderMessage, { type: T }>>;
  /** Closes the worker's engine and ends the process (SIGKILL if it does not go). */
  stop(): Promise<void>;
  /** Messages of type 'unhandled' (must stay empty). */
  unhandled(): string[];
}

/** Starts a holder worker against `redisUrl` (locks) and `oracleUrl` (fencing oracle), with the fault suite's engine options; resolves when ready. */
export async function startHolder(
  redisUrl: string,
  oracleUrl: string,
  engineOptions: Record<string, unknown> = {},
): Promise<Holder> {
  const worker = spawnWorker<HolderMessage>(workerPath('holder-worker.ts'), {
    env: {
      REDIS_URL: redisUrl,
      ORACLE_URL: oracleUrl,
      ENGINE_OPTIONS: JSON.stringify({ ...WORKER_ENGINE_OPTIONS, ...engineOptions }),
    },
  });
  const holder: Holder = {
    process: worker,
    send: (command) => worker.send(command),
    next: (type, id, timeoutMs = 30_000) =>
      worker.waitForMessage(
        (m) => m.type === type && (id === undefined || (m as { id?: string }).id === id),
        timeoutMs,
      ),
    async stop() {
      if (worker.running && !worker.paused) {
        worker.send({ type: 'close' });
        await worker.waitForMessage((m) => m.type === 'closed', 10_000).catch(() => undefined);
      }
      await worker.stop(2000);
    },
    unhandled: () =>
      worker.messages.filter((m) => m.type === 'unhandled').map((m) => (m as { error: string }).error),
  };
  await holder.next('ready', undefined, 60_000);
  return holder;
}
