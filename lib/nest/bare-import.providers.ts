import type { FactoryProvider, Provider } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { LockEngine } from '../core';
import { bareImportMessage, type BareImportWiring } from './distributed-lock.messages';
import { DistributedLockService } from './distributed-lock.service';

// `imports: [DistributedLockModule]` (the class, no forRoot()) gets the class's own @Module metadata
// only. Nest merges that metadata into every forRoot() module as well, before the forRoot() providers,
// which replace the ones below under the same tokens: so these providers only ever run in a bare import.

/** What every forRoot() module (DistributedLockModule's and the testing module's) registers and exports. */
export const LOCK_MODULE_ROOT = Symbol('nestjs-distributed-lock:root');

/** Marks a module built from the class's own metadata (a bare import, or a forRoot() module: see LOCK_MODULE_ROOT). */
const LOCK_MODULE_CLASS = Symbol('nestjs-distributed-lock:module-class');

interface LockModuleRoot {
  readonly service: DistributedLockService;
  readonly engine: LockEngine;
}

/** The service and engine of a forRoot() module, under one token a bare import can find when it is global. */
export const lockModuleRootProvider: FactoryProvider<LockModuleRoot> = {
  provide: LOCK_MODULE_ROOT,
  useFactory: (service: DistributedLockService, engine: LockEngine) => ({ service, engine }),
  inject: [DistributedLockService, LockEngine],
};

type Module = ModulesContainer extends Map<string, infer M> ? M : never;

/**
 * The providers of the class's own @Module metadata. A bare import re-exports the service and engine
 * of a global forRoot() (the default), so it is harmless there; without one (no forRoot() at all, or
 * forRoot() with `isGlobal: false`), it fails the start-up saying what to write instead of Nest's
 * UnknownExportException or "can't resolve dependencies".
 */
export function bareImportProviders(moduleName: string): Provider[] {
  const root = (modules: ModulesContainer, found: LockModuleRoot | undefined): LockModuleRoot => {
    if (found) return found;
    throw new Error(bareImportMessage(moduleName, wiringOf(modules)));
  };
  const inject = [ModulesContainer, { token: LOCK_MODULE_ROOT, optional: true }];
  return [
    { provide: LOCK_MODULE_CLASS, useValue: moduleName },
    {
      provide: DistributedLockService,
      useFactory: (modules: ModulesContainer, found?: LockModuleRoot) => root(modules, found).service,
      inject,
    },
    {
      provide: LockEngine,
      useFactory: (modules: ModulesContainer, found?: LockModuleRoot) => root(modules, found).engine,
      inject,
    },
  ];
}

/** Exported by the class's own metadata, so by a bare import. */
export const BARE_IMPORT_EXPORTS = [DistributedLockService, LockEngine];

/** Which modules import the bare class, and which import a forRoot() module that is not global. */
function wiringOf(modules: ModulesContainer): BareImportWiring {
  const all = [...modules.values()];
  const bare = new Set(all.filter((m) => m.providers.has(LOCK_MODULE_CLASS) && !isRoot(m)));
  const roots = new Set(all.filter(isRoot));
  const importersOf = (targets: Set<Module>): string[] =>
    all.filter((m) => [...m.imports].some((i) => targets.has(i))).map((m) => m.name);
  return { importers: importersOf(bare), privateRoots: importersOf(roots) };
}

function isRoot(module: Module): boolean {
  return module.providers.has(LOCK_MODULE_ROOT);
}
