/**
 * Optional peers (Redis clients, OpenTelemetry, prom-client, GraphQL, the ORMs) are loaded at the
 * moment a feature needs them, never at module load, so the package loads with whichever ones the app
 * has. Each call site writes `try { return require('<name>') } catch (error) { return
 * ifPeerMissing(error, '<name>') }` with the name spelled out inside the `try`: bundlers (webpack,
 * esbuild) see the literal and bundle the peer when it is installed, and only warn when it is not
 * (a `require` outside a `try` would fail their build); and the `require` of this package's own module
 * resolves from where the package is installed, not from the working directory (systemd, PM2 with a
 * `cwd`, containers, monorepos, pnpm's isolated node_modules).
 *
 * The ES module build has no `require`: scripts/build.mjs gives each file that calls one a
 * `createRequire(import.meta.url)` (or the bundle's own `require` inside a CommonJS bundle), so one
 * source serves both builds (docs/PACKAGING.md).
 *
 * Used by every layer above the core too (observability, fencing, nest): it holds no lock concept.
 */

/** Thrown when an optional peer a feature needs is neither installed nor passed in. */
export class OptionalPeerMissingError extends Error {
  constructor(
    readonly peer: string,
    feature: string,
    option: string,
  ) {
    super(
      `${feature} needs the optional peer "${peer}": install it (npm i ${peer}) or pass it as \`${option}\``,
    );
    this.name = 'OptionalPeerMissingError';
  }
}

/**
 * The `catch` of a peer's `require`: undefined when `name` itself is not installed, so the caller can
 * fall back or say what to install; any other load error (a peer that fails on a file of its own)
 * propagates.
 */
export function ifPeerMissing(error: unknown, name: string): undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    error instanceof Error &&
    error.message.includes(`'${name}'`)
  ) {
    return undefined;
  }
  throw error;
}

/** A client library the app asked for by its options (a URL, ioredis options, a GLIDE client) is not installed. */
export function clientPackageMissing(name: string, why: string): TypeError {
  return new TypeError(`${why} needs the package "${name}": install it (npm i ${name}) or pass a client`);
}
