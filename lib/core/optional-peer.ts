/**
 * Optional peers (Redis clients, OpenTelemetry, prom-client, GraphQL, the ORMs) are loaded at the
 * moment a feature needs them, never at module load, so the package loads with whichever ones the app
 * has. Every caller passes its own `() => require('<name>')` with the name written out: bundlers
 * (webpack, esbuild) see the literal and bundle the peer when it is installed, and a `require` of this
 * package's own module resolves from where the package is installed, not from the working directory
 * (systemd, PM2 with a `cwd`, containers, monorepos, pnpm's isolated node_modules).
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

/** Runs `load` (a `require` of `name`); undefined when `name` itself is not installed. Other errors propagate. */
export function loadOptionalPeer<T>(name: string, load: () => unknown): T | undefined {
  try {
    return load() as T;
  } catch (error) {
    if (isNotFound(error, name)) return undefined;
    throw error;
  }
}

/** Runs `load` (a `require` of `name`); a missing client package is a TypeError naming it and the way out. */
export function requireClientPackage<T>(name: string, why: string, load: () => unknown): T {
  const loaded = loadOptionalPeer<T>(name, load);
  if (loaded === undefined) {
    throw new TypeError(`${why} needs the package "${name}": install it (npm i ${name}) or pass a client`);
  }
  return loaded;
}

function isNotFound(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // Only the peer itself missing; a peer that is present but fails on its own missing file rethrows.
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    error instanceof Error &&
    error.message.includes(`'${name}'`)
  );
}
