/*
 * One app worker of the demo (forked by app-cluster.ts through Node's cluster module). Settings
 * come from the environment like the plain app's; logs stay quiet so the demo's output is readable.
 */
import { startSampleApp } from '../main';
import { configFromEnv } from '../sample-config';

startSampleApp(configFromEnv(), { host: process.env.HOST ?? '127.0.0.1', logger: ['error', 'warn'] }).catch(
  (error: unknown) => {
    console.error('worker failed to start:', error);
    process.exit(1);
  },
);
