import { startLockEnv } from '../support/lock-env';
import { describeLockBehaviour } from './behaviour/describe-lock-behaviour';

// The shared behaviour suite on a real redis-server (the reference the in-memory backend follows).
describeLockBehaviour('Redis', async () => {
  const env = await startLockEnv();
  return { engine: (options) => env.engine(options), closeEngines: env.cleanup, stop: env.stop };
});
