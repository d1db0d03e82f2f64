// Past the core's public surface: assertKnownNames and describe refuse unknown options and word the
// message exactly as the engine does for its own.
import type { CanActivate, Type } from '@nestjs/common';
import { assertKnownNames, describe } from '../core/internal';

/** Options of DistributedLockConsoleModule.register(). */
export interface DistributedLockConsoleOptions {
  /** Where the console is mounted (under the app's global prefix). Default `'locks'`. */
  path?: string;
  /** Whether POST …/api/locks/:key/release may force-release a lock. Default false (403). */
  allowForceRelease?: boolean;
  /** Guards on the console's routes only, besides the app's global ones. Default none. */
  guards?: (CanActivate | Type<CanActivate>)[];
  /**
   * Who a force release from the console is recorded as (`by` in the audit entry), from the request:
   * e.g. `(req) => req.user.email`. Default `console <remote address>`.
   */
  releasedBy?: (request: unknown) => string | undefined;
  /** The page's title. Default `'Distributed locks'`. */
  title?: string;
  /** How often the page re-reads the list, in ms (besides live events). Default 2 000. */
  refreshMs?: number;
}

/** The options with defaults filled in. */
export interface ResolvedConsoleOptions {
  readonly path: string;
  readonly allowForceRelease: boolean;
  readonly guards: (CanActivate | Type<CanActivate>)[];
  readonly releasedBy?: (request: unknown) => string | undefined;
  readonly title: string;
  readonly refreshMs: number;
}

/** Injection token of the resolved console options. */
export const DISTRIBUTED_LOCK_CONSOLE_OPTIONS = Symbol('DISTRIBUTED_LOCK_CONSOLE_OPTIONS');

const NAMES = ['path', 'allowForceRelease', 'guards', 'releasedBy', 'title', 'refreshMs'];

/** Validates register()'s options (at module definition, before the app starts) and fills defaults. */
export function resolveConsoleOptions(options: unknown = {}): ResolvedConsoleOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`DistributedLockConsoleModule options must be an object, got ${describe(options)}`);
  }
  const o = options as DistributedLockConsoleOptions;
  assertKnownNames(o as Record<string, unknown>, NAMES, 'DistributedLockConsoleModule options');
  const path = o.path ?? 'locks';
  if (typeof path !== 'string' || !/^[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//')) {
    throw new TypeError(`path must be a URL path of letters, digits, - . _ ~ and /, got ${describe(path)}`);
  }
  const allowForceRelease = o.allowForceRelease ?? false;
  if (typeof allowForceRelease !== 'boolean') {
    throw new TypeError(`allowForceRelease must be a boolean, got ${describe(allowForceRelease)}`);
  }
  const guards = o.guards ?? [];
  if (!Array.isArray(guards)) throw new TypeError(`guards must be an array, got ${describe(guards)}`);
  if (o.releasedBy !== undefined && typeof o.releasedBy !== 'function') {
    throw new TypeError(`releasedBy must be a function, got ${describe(o.releasedBy)}`);
  }
  const title = o.title ?? 'Distributed locks';
  if (typeof title !== 'string') throw new TypeError(`title must be a string, got ${describe(title)}`);
  const refreshMs = o.refreshMs ?? 2000;
  if (
    typeof refreshMs !== 'number' ||
    !Number.isInteger(refreshMs) ||
    refreshMs < 100 ||
    refreshMs > 3_600_000
  ) {
    throw new RangeError(
      `refreshMs must be a whole number of ms from 100 to 3600000, got ${describe(refreshMs)}`,
    );
  }
  return {
    path: path.replace(/^\/+|\/+$/g, ''),
    allowForceRelease,
    guards,
    releasedBy: o.releasedBy,
    title,
    refreshMs,
  };
}
