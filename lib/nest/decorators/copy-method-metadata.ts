/**
 * Copies every reflect-metadata entry of `from` onto `to` (own keys only; arrays are copied so
 * that a later `extendArrayMetadata` on one never shows up on the other). Decorators applied
 * before @DistributedLock() wrote their metadata (routes, @Cron, @OnEvent, Swagger) onto the
 * original function; this moves it to the wrapper that replaces it.
 */
export function copyMethodMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    const value: unknown = Reflect.getOwnMetadata(key, from);
    Reflect.defineMetadata(key, Array.isArray(value) ? [...value] : value, to);
  }
}
