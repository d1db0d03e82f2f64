import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LockOwner } from '../options/lock-info';

/**
 * The default `app` of an engine: the package name npm runs (`npm_package_name`), else the name in
 * the working directory's package.json, else the host name. Read once per process.
 */
export function defaultAppName(): string {
  cachedApp ??= readAppName();
  return cachedApp;
}

let cachedApp: string | undefined;

function readAppName(): string {
  const fromNpm = process.env.npm_package_name;
  if (fromNpm) return fromNpm;
  try {
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { name?: unknown };
    if (typeof pkg.name === 'string' && pkg.name !== '') return pkg.name;
  } catch {
    // no package.json where the process runs: fall back to the host
  }
  return hostname();
}

/** Who this engine is, as holders and waiters are reported. */
export function ownerIdentity(engineId: string, app: string | undefined): LockOwner {
  return { engine: engineId, host: hostname(), pid: process.pid, app: app ?? defaultAppName() };
}

/** The engine id inside an owner id (`<engine id>.<random>`), or the whole id for a process id. */
export function engineOf(ownerId: string): string {
  const dot = ownerId.indexOf('.');
  return dot < 0 ? ownerId : ownerId.slice(0, dot);
}
