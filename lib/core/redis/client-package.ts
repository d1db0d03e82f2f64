/**
 * Loads a Redis client library at the moment it is needed, never at module load: every client
 * library is an optional peer, so the package loads with whichever one the app has (or none, for
 * the in-memory testing backend). The CommonJS build uses a plain `require`; the ESM build (no
 * `require` in scope) a `createRequire` rooted at the app's working directory, as the optional
 * observability peers do. Throws a clear error naming the package when it is not installed.
 */
export function requireClientPackage<T>(name: string, why: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the lazy load is the point
    if (typeof require === 'function') return require(name) as T;
    const { createRequire } = process.getBuiltinModule('node:module');
    return createRequire(`${process.cwd()}/`)(name) as T;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (
      (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
      String(error).includes(`'${name}'`)
    ) {
      throw new TypeError(`${why} needs the package "${name}": install it (npm i ${name}) or pass a client`);
    }
    throw error;
  }
}
