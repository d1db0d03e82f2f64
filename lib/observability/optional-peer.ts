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
 * Loads an optional peer at call time, never at module load, so the package loads without it.
 *
 * CommonJS build: a plain `require`, which resolves from this package like any peer import.
 * ESM build (no `require` in scope): `module.createRequire` rooted at the app's working directory,
 * reached through `process.getBuiltinModule` (Node ≥ 20.16) so that neither `import.meta` nor a
 * top-level import of `node:module` is needed and one source serves both builds. Apps that
 * resolve peers from elsewhere (monorepos, bundlers) pass the module in the feature's options.
 *
 * Returns undefined when `name` is not installed; other load errors propagate.
 */
export function loadOptionalPeer<T>(name: string): T | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the lazy load is the point
    if (typeof require === 'function') return require(name) as T;
    const { createRequire } = process.getBuiltinModule('node:module');
    return createRequire(`${process.cwd()}/`)(name) as T;
  } catch (error) {
    if (isNotFound(error, name)) return undefined;
    throw error;
  }
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
