/*
 * The shared behaviour suite (test/testing/behaviour) on a real redis-server, every engine built on a
 * client of one family that the test made and passed in, as a user with their own client would.
 */
import { createLockEngine } from '../../lib/core/public';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import type { CreateLockEngineOptions } from '../../lib/core/topology/resolve-lock-config';
import { startRedis } from './redis-server';
import { describeLockBehaviour } from '../testing/behaviour/describe-lock-behaviour';
import { ClientFactory, type Family } from './client-families';

/**
 * Declares the behaviour suite for `family` on one standalone server. Each engine gets its own client,
 * made synchronously and passed unconnected (node-redis is connected by the library on first use); GLIDE,
 * whose clients are created connected (async) and multiplex every caller, shares one client per test.
 */
export function describeBehaviourOn(family: Family): void {
  describeLockBehaviour(`${family} (standalone)`, async () => {
    const server = await startRedis();
    const clients = new ClientFactory(family);
    const glide = family === 'glide' ? new ClientFactory(family) : undefined;
    let shared: unknown = glide ? await glide.standalone(server.url) : undefined;
    let engines: LockEngine[] = [];
    return {
      engine(options) {
        const redis = shared ?? clients.sync(server.url);
        const engine = createLockEngine({
          ...(options as Partial<CreateLockEngineOptions>),
          redis: redis as never,
        });
        engines.push(engine);
        return engine;
      },
      async closeEngines() {
        const open = engines;
        engines = [];
        await Promise.all(open.map((e) => e.close()));
        await clients.closeClients();
      },
      async stop() {
        await clients.closeClients();
        await glide?.closeClients();
        shared = undefined;
        await server.stop();
      },
    };
  });
}
