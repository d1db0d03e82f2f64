import { spawnWorker, workerPath, WorkerProcess } from './spawn-worker';
import type { HolderCommand, HolderMessage } from './workers/fault-protocol';
import { WORKER_ENGINE_OPTIONS } from './fault-engine';

/** A holder worker process with typed commands. */
export interface Holder {
  readonly process: WorkerProcess<HolderMessage>;
  /** Sends a command. */
  send(command: HolderCommand): void;
  /** Waits for the next message of `type` (and key, when given). ts-node start-up is slow: generous default. */
  next<T extends HolderMessage['type']>(
    type: T,
    key?: string,
    timeoutMs?: number,
  ): Promise<Extract<HolderMessage, { type: T }>>;
  /** Closes the worker's engine and ends the process (SIGKILL if it does not go). */
  stop(): Promise<void>;
  /** Messages of type 'unhandled' (must stay empty). */
  unhandled(): string[];
}

/** Starts a holder worker against `redisUrl` (locks) and `storeUrl` (fencing oracle); resolves when ready. */
export async function startHolder(
  name: string,
  redisUrl: string,
  storeUrl: string,
  engineOptions: Record<string, unknown> = {},
): Promise<Holder> {
  const worker = spawnWorker<HolderMessage>(workerPath('fault-holder-worker.ts'), {
    env: {
      WORKER_NAME: name,
      REDIS_URL: redisUrl,
      STORE_URL: storeUrl,
      ENGINE_OPTIONS: JSON.stringify({ ...WORKER_ENGINE_OPTIONS, ...engineOptions }),
    },
  });
  const holder: Holder = {
    process: worker,
    send: (command) => worker.send(command),
    next: (type, key, timeoutMs = 30_000) =>
      worker.waitForMessage(
        (m) => m.type === type && (key === undefined || (m as { key?: string }).key === key),
        timeoutMs,
      ),
    async stop() {
      if (worker.running && !worker.paused) {
        worker.send({ cmd: 'close' });
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
