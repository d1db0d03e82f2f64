import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { createInMemoryLockEngine } from '../../lib/testing';
import { describeLockBehaviour } from '../testing/behaviour/describe-lock-behaviour';

// The shared behaviour suite on the in-memory backend: engines of one test share one store.
describeLockBehaviour('the in-memory backend', async () => {
  let engines: LockEngine[] = [];
  return {
    engine(options) {
      const engine = createInMemoryLockEngine({ ...options, replicaOf: engines[0] });
      engines.push(engine);
      return engine;
    },
    async closeEngines() {
      const closing = engines;
      engines = [];
      await Promise.all(closing.map((e) => e.close()));
    },
    async stop() {},
  };
});
