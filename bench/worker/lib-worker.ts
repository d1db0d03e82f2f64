import Redis from 'ioredis';
import { createInterface } from 'node:readline';
import { createAdapter, isLibraryId } from '../adapters';
import { exclude, installCommandCounter } from './command-counter';
import { runContention, runUncontended } from './loops';
import type { ParentMessage, WorkerMessage } from './protocol';

/*
 * One OS process driving one library (env BENCH_LIB, BENCH_REDIS_URL, BENCH_WORKER_INDEX).
 * JSON lines in on stdin (tasks), JSON lines out on stdout (results); see protocol.ts.
 */

const send = (message: WorkerMessage) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function main(): Promise<void> {
  const lib = process.env.BENCH_LIB ?? '';
  const redisUrl = process.env.BENCH_REDIS_URL ?? '';
  const workerIndex = Number(process.env.BENCH_WORKER_INDEX ?? 0);
  if (!isLibraryId(lib)) throw new Error(`unknown BENCH_LIB ${JSON.stringify(lib)}`);
  installCommandCounter();
  const lock = await createAdapter(lib, redisUrl);
  const counter = exclude(new Redis(redisUrl));
  // Warm-up: connect, load scripts, open subscriber connections, JIT the hot paths (≥ 400 ms).
  const warmUntil = performance.now() + 400;
  for (let i = 0; i < 200 || performance.now() < warmUntil; i++)
    await (
      await lock.acquire(`bench:warmup:${lib}:${workerIndex}`, 1000)
    )();
  await counter.ping();
  send({ type: 'ready', name: lock.name });

  const input = createInterface({ input: process.stdin });
  for await (const line of input) {
    const message = JSON.parse(line) as ParentMessage;
    if (message.type === 'exit') break;
    try {
      const result =
        message.task.kind === 'uncontended'
          ? await runUncontended(lock, message.task, workerIndex)
          : await runContention(lock, message.task, counter);
      send({ type: 'done', id: message.id, result });
    } catch (err) {
      send({
        type: 'failed',
        id: message.id,
        message: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
    }
  }
  // Some peers leave timers behind (watch-dogs, wait timeouts): close, then exit explicitly.
  const closing = Promise.allSettled([lock.close(), counter.quit()]);
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
