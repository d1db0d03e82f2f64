import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';

/** Builds and initialises a Nest HTTP app from a module's metadata (Nest's logger off). */
export async function startApp(metadata: ModuleMetadata): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
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
