// Every message the Nest layer writes, in one place (the engine's own messages live with its errors).

/** The decorated method ran before any DistributedLockService was initialised. */
export const NOT_INITIALISED_MESSAGE =
  'DistributedLockModule not initialised — did you import DistributedLockModule.forRoot() and call app.init()?';

/** Body message of the HTTP answer when the lock stayed busy. */
export const LOCKED_MESSAGE = 'The resource is locked by another request; retry later';

/** Body message of the HTTP answer when Redis could not be reached. */
export const LOCK_UNAVAILABLE_MESSAGE = 'The lock service is unavailable; retry later';

/** The decorator was put on something that is not a method. */
export const notAMethodMessage = (where: string): string =>
  `@DistributedLock() can only decorate methods; ${where} is not a method`;

/** Where a decorated method is, for messages: `Class.method`. */
export const methodName = (target: object, propertyKey: string | symbol | undefined): string => {
  const owner = (typeof target === 'function' ? target.name : target?.constructor?.name) || '<anonymous>';
  return propertyKey === undefined ? `class ${owner}` : `${owner}.${String(propertyKey)}`;
};

/** A key template argument that is absent. */
export const missingKeyPartMessage = (template: string, placeholder: string, detail: string): string =>
  `Lock key template "${template}": {${placeholder}} ${detail}; key parts must be strings or numbers`;

/** A key template argument of a type that cannot be part of a key. */
export const badKeyPartMessage = (template: string, placeholder: string, got: string): string =>
  `Lock key template "${template}": {${placeholder}} is ${got}, not a string or a number`;

/** A key function that returned something other than a non-empty string. */
export const badKeyFunctionResultMessage = (where: string, got: string): string =>
  `The key function of @DistributedLock() on ${where} must return a non-empty string, got ${got}`;

/** `onBusy: 'skip'` on an HTTP route handler, refused at start-up. */
export const skipOnRouteMessage = (where: string): string =>
  `@DistributedLock({ onBusy: 'skip' }) on the route handler ${where}: a skipped request would answer ` +
  `2xx with an empty body. Use the default onBusy ('throw': busy answers 423 with Retry-After), or ` +
  `move the locked work into a provider method the route calls.`;

/** The health check found the service closed. */
export const SERVICE_CLOSED_MESSAGE = 'The lock service is closed';
