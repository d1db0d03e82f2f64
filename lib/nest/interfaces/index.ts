export * from './distributed-lock-module-options.interface';
export * from './distributed-lock-options.interface';
export * from './distributed-lock-health.interface';
