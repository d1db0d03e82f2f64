export * from './lock-error';
export * from './lock-not-acquired.error';
export * from './lock-lost.error';
export * from './lock-redis.error';
export * from './lock-wrong-type.error';
export * from './lock-upgrade.error';
export * from './lock-replication.error';
export * from './lock-partial-reentry.error';
