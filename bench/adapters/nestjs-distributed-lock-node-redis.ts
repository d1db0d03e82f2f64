import { createClient } from 'redis';
import { createLockEngine } from '../../lib/core';
import { countCommand } from '../worker/command-counter';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/**
 * This library, engine defaults, on a node-redis 6 client the adapter passes in (RESP3, `sendCommand`,
 * the library's own duplicate for wake-ups). Commands are counted by wrapping the client's
 * `sendCommand` (the command counter patches only ioredis); the wake-up duplicate's few
 * SUBSCRIBE/UNSUBSCRIBE are not counted.
 */
export async function create(redisUrl: string, settings: BenchLockSettings): Promise<BenchLock> {
  const client = createClient({ url: redisUrl });
  client.on('error', () => undefined);
  await client.connect();
  const send = client.sendCommand.bind(client);
  (client as { sendCommand: typeof send }).sendCommand = ((...args: Parameters<typeof send>) => {
    countCommand();
    return send(...args);
  }) as typeof send;
  const adapter = engineAdapter(
    `nestjs-distributed-lock on node-redis 6${leaseLabel(settings)}`,
    createLockEngine({ redis: client }),
    settings,
  );
  return {
    ...adapter,
    close: async () => {
      await adapter.close();
      await client.close();
    },
  };
}
