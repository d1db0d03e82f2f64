import { startEngineEnv } from '../core/support/engine-env';
import { describeLockBehaviour } from './behaviour/describe-lock-behaviour';

// The shared behaviour suite on a real redis-server (the reference the in-memory backend follows).
describeLockBehaviour('Redis', async () => {
  const env = await startEngineEnv();
  return { engine: (options) => env.engine(options), closeEngines: env.closeEngines, stop: env.stop };
});
