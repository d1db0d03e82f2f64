// Every message the Nest layer writes, in one place (the engine's own messages live with its errors).

/** The decorated method ran on an object that has no lock service (not built by an initialised Nest app). */
export const NOT_INITIALISED_MESSAGE =
  'DistributedLockModule not initialised — did you import DistributedLockModule.forRoot() and call app.init()? ' +
  'A decorated method finds the lock service of the Nest app that created its object; an object built ' +
  'with `new` outside the container has none.';

/** Every start-up message about the module's wiring starts with the package's name. */
const PACKAGE = 'nestjs-distributed-lock';

/** The ways to give a module the lock service when forRoot() is not global. */
const scopedFixes = (moduleName: string): string =>
  `Either register DistributedLockModule.forRoot(...) (or forRootAsync(...)) once in the root module without ` +
  `isGlobal: false (it is global by default) and no other module needs to import it; or import the module ` +
  `forRoot(...) returns into ${moduleName} (imports: [DistributedLockModule.forRoot({ ..., isGlobal: false })]), ` +
  `or into a shared module that lists DistributedLockModule in its exports, and import that module into ` +
  `${moduleName}. In a test, DistributedLockTestingModule.forRoot() stands in for DistributedLockModule.forRoot().`;

/** A decorated provider or controller whose module sees no DistributedLockService, refused at start-up. */
export const serviceNotVisibleMessage = (className: string, methods: string[], moduleName: string): string =>
  `${PACKAGE}: @DistributedLock() on ${methods.map((m) => `${className}.${m}`).join(', ')}: no ` +
  `DistributedLockService is visible from ${moduleName}, so these methods could not lock. ` +
  scopedFixes(moduleName);

/** A decorated instance reached app start-up with no lock service: DistributedLockModule is not imported. */
export const moduleMissingMessage = (className: string, methods: string[]): string =>
  `${PACKAGE}: @DistributedLock() on ${methods.map((m) => `${className}.${m}`).join(', ')}: the app has no ` +
  `DistributedLockService for ${className}, so these methods could not lock. Import ` +
  `DistributedLockModule.forRoot(...) (or forRootAsync(...)) in the app's root module. In a test, ` +
  `DistributedLockTestingModule.forRoot() from ${PACKAGE}/testing stands in for it.`;

/** Who imports the bare module class, and who imports a forRoot() module that is not global. */
export interface BareImportWiring {
  /** Modules with `imports: [TheModuleClass]`. */
  importers: string[];
  /** Modules that import a forRoot() module registered with `isGlobal: false`. */
  privateRoots: string[];
}

/** `imports: [DistributedLockModule]` (no forRoot()) in an app with no global forRoot(), refused at start-up. */
export const bareImportMessage = (moduleClass: string, wiring: BareImportWiring): string => {
  const importers = wiring.importers.length > 0 ? wiring.importers.join(', ') : 'a module';
  const feature = wiring.importers.length === 1 ? wiring.importers[0] : 'that module';
  const verb = wiring.importers.length > 1 ? 'import' : 'imports';
  const why =
    wiring.privateRoots.length > 0
      ? `the forRoot() module imported by ${wiring.privateRoots.join(', ')} is registered with ` +
        `isGlobal: false, so only the modules that import it see it`
      : `the app registers no DistributedLockModule.forRoot() (nor DistributedLockTestingModule.forRoot())`;
  return (
    `${PACKAGE}: ${importers} ${verb} ${moduleClass} without forRoot(). The bare class provides nothing by ` +
    `itself: it only re-exports the lock service of a global forRoot(), and ${why}. ` +
    scopedFixes(feature)
  );
};

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

/** `onBusy: 'skip'` on a GraphQL resolver, refused at start-up. */
export const skipOnResolverMessage = (where: string): string =>
  `@DistributedLock({ onBusy: 'skip' }) on the GraphQL resolver ${where}: a skipped call would answer ` +
  `null without an error. Use the default onBusy ('throw': busy answers a GraphQL error with ` +
  `extensions.code 'LOCKED' and retryAfterMs), or move the locked work into a provider method.`;

/** `onBusy: 'skip'` on a microservice message handler (request-response), refused at start-up. */
export const skipOnMessageHandlerMessage = (where: string): string =>
  `@DistributedLock({ onBusy: 'skip' }) on the message handler ${where}: the client waits for an ` +
  `answer and a skipped call would send an empty one. Use the default onBusy ('throw': busy answers an ` +
  `RpcException { code: 'LOCKED', retryAfterMs }), or use @EventPattern for fire-and-forget work.`;

/** Client-facing message of an unexpected lock failure outside HTTP (the lock error stays in the log). */
export const lockFailedMessage = (errorName: string): string => `The lock failed (${errorName}); retry later`;

/** The health check found the service closed. */
export const SERVICE_CLOSED_MESSAGE = 'The lock service is closed';
