import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { AppModule } from '../../sample-app/app.module';
import { DEFAULT_SAMPLE_CONFIG, type SampleConfig } from '../../sample-app/sample-config';
import { CriticalPause } from '../../sample-app/seckill/critical-pause';

/** Key prefix of the apps under test; their locks live under `${E2E_PREFIX}lock:`. */
export const E2E_PREFIX = 'e2e:';
/** The lock key prefix the apps use (for a second, outside lock engine on the same Redis). */
export const E2E_LOCK_PREFIX = `${E2E_PREFIX}lock:`;

/** One running instance of the sample app (a "replica"), listening on a free loopback port. */
export interface SampleAppUnderTest {
  app: INestApplication;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** supertest agent bound to `url`. */
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

/** Settings of an app under test; `pause` replaces the seckill critical section's pause. */
export interface SampleAppTestOptions extends Partial<SampleConfig> {
  pause?: Pick<CriticalPause, 'wait'>;
}

/**
 * Builds the real AppModule against `redisUrl`, with the app's normal providers except the
 * critical-section pause when one is given, and listens on an ephemeral port (supertest would
 * otherwise call listen() per request, which breaks with many concurrent requests).
 */
export async function startSampleAppUnderTest(
  redisUrl: string,
  options: SampleAppTestOptions = {},
): Promise<SampleAppUnderTest> {
  const { pause, ...overrides } = options;
  const config: SampleConfig = {
    ...DEFAULT_SAMPLE_CONFIG,
    keyPrefix: E2E_PREFIX,
    ...overrides,
    redisUrl,
    port: 0,
  };
  let builder = Test.createTestingModule({ imports: [AppModule.forRoot(config)] });
  if (pause) builder = builder.overrideProvider(CriticalPause).useValue(pause);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return { app, url, http: request(url), close: () => app.close() };
}

/** Closes every app that started (ignores the undefined slots of apps that did not). */
export async function closeApps(apps: ReadonlyArray<SampleAppUnderTest | undefined>): Promise<void> {
  await Promise.allSettled(apps.map((a) => a?.close()));
}
