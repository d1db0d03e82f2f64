import { GlideClient } from '@valkey/valkey-glide';
import { createLockEngine } from '../../lib/core';
import { countCommand } from '../worker/command-counter';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/**
 * This library, engine defaults, on a Valkey GLIDE client the adapter passes in (RESP3,
 * `customCommand`, a second GLIDE client for wake-ups). Commands are counted by wrapping the
 * client's `customCommand`; GLIDE's request timeout is raised to the engine's command timeout.
 */
export async function create(redisUrl: string, settings: BenchLockSettings): Promise<BenchLock> {
  const { hostname, port } = new URL(redisUrl);
  const client = await GlideClient.createClient({
    addresses: [{ host: hostname, port: Number(port) }],
    requestTimeout: 5000,
  });
  const custom = client.customCommand.bind(client);
  (client as { customCommand: typeof custom }).customCommand = ((...args: Parameters<typeof custom>) => {
    countCommand();
    return custom(...args);
  }) as typeof custom;
  const adapter = engineAdapter(
    `nestjs-distributed-lock on GLIDE${leaseLabel(settings)}`,
    createLockEngine({ redis: client }),
    settings,
  );
  return {
    ...adapter,
    close: async () => {
      await adapter.close();
      client.close();
    },
  };
}
