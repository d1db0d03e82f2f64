/*
 * The set-up of the Nest specs, beside lock-env.ts (the engine specs): apps built from a module's
 * metadata on Express or Fastify, always closed. `useNestEnv()` registers the hooks of a spec file
 * (one redis-server per file, apps closed after each test); `startApp()` / `closeApps()` are the same
 * without hooks, for files that manage their own servers.
 */
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { DistributedLockModule } from '../../lib';
import { startRedis, type RedisServerProcess } from './redis-server';

/** The HTTP platforms every HTTP behaviour is checked on. */
export type Platform = 'express' | 'fastify';
export const PLATFORMS: readonly Platform[] = ['express', 'fastify'];

/** How {@link startApp} builds an app. */
export interface AppOptions {
  /** Express (default) or Fastify. */
  platform?: Platform;
  /** Listen on 127.0.0.1 on a free port (for fetch); default: init() only (for supertest). */
  listen?: boolean;
}

/** Builds and initialises (or starts listening) a Nest HTTP app from a module's metadata (Nest's logger off). */
export async function startApp(
  metadata: ModuleMetadata,
  options: AppOptions = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app =
    options.platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  try {
    if (options.listen) await app.listen(0, '127.0.0.1');
    else await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

/** The `http://127.0.0.1:<port>` of a listening app. */
export async function baseUrl(app: INestApplication): Promise<string> {
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/** Closes every app given, even when one close fails; rethrows the first failure. */
export async function closeApps(...apps: (INestApplication | undefined)[]): Promise<void> {
  const results = await Promise.allSettled(apps.map((app) => app?.close()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A unique key prefix per test, so tests sharing a server never see each other's locks. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${Math.random().toString(36).slice(2, 8)}:`;
}

/** One redis-server for a spec file and the Nest apps its tests build on it. */
export interface NestEnv {
  readonly server: RedisServerProcess;
  readonly url: string;
  /** `DistributedLockModule.forRoot()` on this server, with `keyPrefix` (a unique one unless given). */
  lockModule(options?: { keyPrefix?: string }): ReturnType<typeof DistributedLockModule.forRoot>;
  /** {@link startApp}; the app is closed after the test (or after the file, when built in beforeAll). */
  app(metadata: ModuleMetadata, options?: AppOptions): Promise<INestApplication>;
}

/** Registers the hooks of a spec file: a redis-server in beforeAll; apps closed after each test and after all. */
export function useNestEnv(): NestEnv {
  let server: RedisServerProcess | undefined;
  // Apps a test built close after it; apps built in beforeAll, after the file.
  let testApps: INestApplication[] = [];
  let fileApps: INestApplication[] = [];
  const running = (): RedisServerProcess => {
    if (!server) throw new Error('the Nest env is used outside the tests of its spec file');
    return server;
  };
  let inTest = false;
  beforeAll(async () => {
    server = await startRedis();
  });
  beforeEach(() => {
    inTest = true;
  });
  afterEach(async () => {
    inTest = false;
    const open = testApps;
    testApps = [];
    await closeApps(...open);
  });
  afterAll(async () => {
    const open = [...testApps, ...fileApps];
    [testApps, fileApps] = [[], []];
    await closeApps(...open);
    await server?.stop();
    server = undefined;
  });
  return {
    get server() {
      return running();
    },
    get url() {
      return running().url;
    },
    lockModule: (options = {}) =>
      DistributedLockModule.forRoot({
        redis: running().url,
        keyPrefix: options.keyPrefix ?? uniquePrefix('nest'),
      }),
    async app(metadata, options) {
      const app = await startApp(metadata, options);
      (inTest ? testApps : fileApps).push(app);
      return app;
    },
  };
}
