// `nestjs-distributed-lock/fencing`: storage-side fencing. The rule (fence-rule.ts) applied by SQL,
// ORM and Redis helpers, and the HTTP header convention. No Nest import here (the guard is
// `nestjs-distributed-lock/fencing/nest`); ORMs are optional peers, typed by the parts the helpers call.
/**
 * Storage-side fencing: SQL, ORM and Redis helpers and the HTTP header convention (docs/FENCING.md).
 * @module nestjs-distributed-lock/fencing
 */
export { StaleFenceError } from './stale-fence.error';
export type { StoredFence } from './stale-fence.error';
export { fenceOf, currentFence, fenceTokenBigInt, MAX_FENCE_OWNER_LENGTH } from './fence';
export type { Fence, FenceSource, CurrentLockSource } from './fence';
export { admitsFence } from './fence-rule';
export { fencedUpdate, fencedUpdateSql, fenceColumnsMigration } from './sql/fenced-sql';
export type {
  FenceColumns,
  FencedUpdateSpec,
  FencedUpdateStatement,
  SqlQuery,
  SqlStatement,
} from './sql/fenced-sql';
export type { SqlDialect } from './sql/sql-dialect';
export { prismaFencedUpdate } from './orm/prisma';
export type { PrismaFencedDelegate, PrismaFencedUpdate } from './orm/prisma';
export { typeormFencedUpdate } from './orm/typeorm';
export type { TypeOrmFencedRepository, TypeOrmFencedUpdate } from './orm/typeorm';
export { drizzleFencedUpdate } from './orm/drizzle';
export type { DrizzleFencedDatabase, DrizzleFencedUpdate, DrizzleOperators } from './orm/drizzle';
export { knexFencedUpdate } from './orm/knex';
export type { KnexFencedBuilder, KnexFencedTable, KnexFencedUpdate } from './orm/knex';
export type { FenceFields } from './orm/orm-fields';
export { RedisFencedStore } from './redis/redis-fenced-store';
export type { FencedStoreRedis, RedisFencedStoreOptions } from './redis/redis-fenced-store';
export { FenceLedger, MemoryFenceLedger } from './http/fence-ledger';
export {
  FENCING_TOKEN_HEADER,
  FENCING_OWNER_HEADER,
  fencingHeaders,
  readFencingHeaders,
} from './http/fencing-headers';
export type { IncomingHeaders } from './http/fencing-headers';
