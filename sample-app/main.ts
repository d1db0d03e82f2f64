/*
 * The sample app: `npm run start:sample` (`nest start`, built by the Nest CLI from nest-cli.json and
 * sample-app/tsconfig.json; env PORT, default 3000; REDIS_URL, default redis://127.0.0.1:6379; see
 * sample-config.ts for the rest).
 */
import 'reflect-metadata';
import { INestApplication, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { listenTuned } from './http-tuning';
import { configFromEnv, type SampleConfig } from './sample-config';

/** Options of startSampleApp beyond the app's settings. */
export interface StartOptions {
  /** Interface to bind; default all. */
  host?: string;
  /** Nest log levels; default Nest's. */
  logger?: LogLevel[] | false;
}

/** Creates the app for `config`, listens on `config.port` and returns it (close it with app.close()). */
export async function startSampleApp(
  config: SampleConfig,
  options: StartOptions = {},
): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule.forRoot(config), {
    // On close, drop idle keep-alive sockets instead of waiting for clients to hang up.
    forceCloseConnections: true,
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  app.enableShutdownHooks(['SIGINT', 'SIGTERM']);
  await listenTuned(app, config.port, options.host ?? '0.0.0.0');
  return app;
}

if (require.main === module) {
  const config = configFromEnv();
  startSampleApp(config).then(
    () => console.log(`sample app listening on http://localhost:${config.port} (Redis ${config.redisUrl})`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
