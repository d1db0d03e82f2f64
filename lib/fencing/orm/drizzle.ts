// Past the core's public surface: optional peers are loaded the core's one way (errors/optional-peer.ts),
// a literal require that resolves from where this package is installed.
import { ifPeerMissing, OptionalPeerMissingError } from '../../core/internal';
import { toFence, type FenceSource } from '../fence';
import { affectedRows } from '../sql/sql-dialect';
import { staleFrom } from '../sql/fenced-sql';
import { assertRecord, fenceFields, type FenceFields } from './orm-fields';

/** The drizzle-orm operators the guard is built with (loaded from `drizzle-orm` unless passed). */
export interface DrizzleOperators {
  and(...conditions: unknown[]): unknown;
  or(...conditions: unknown[]): unknown;
  lt(column: any, value: unknown): unknown;
  eq(column: any, value: unknown): unknown;
}

/** The part of a Drizzle database (`drizzle(pool)`, a transaction) the helper calls. */
export interface DrizzleFencedDatabase {
  update(table: any): { set(values: any): { where(where: any): PromiseLike<unknown> } };
  select(fields: any): { from(table: any): { where(where: any): PromiseLike<Record<string, unknown>[]> } };
}

/** A fenced Drizzle write: `where` a Drizzle condition naming the row, `set` the values to write. */
export interface DrizzleFencedUpdate {
  /** The table object (`pgTable(...)`, `sqliteTable(...)`), with the fence columns as properties. */
  table: Record<string, any>;
  where: unknown;
  set: Record<string, unknown>;
  fence: FenceSource;
  /** Table properties of the fence columns; default `lockFence`, `lockOwner`. */
  fields?: FenceFields;
  /** drizzle-orm's operators, when the app resolves drizzle-orm from elsewhere (monorepos, bundlers). */
  operators?: DrizzleOperators;
}

/**
 * `db.update(table).set(set + fence).where(and(where, guard))`, checking the affected-row count.
 * Resolves to the rows written (0: no row matches); throws StaleFenceError when the fence refuses.
 */
export async function drizzleFencedUpdate(
  db: DrizzleFencedDatabase,
  update: DrizzleFencedUpdate,
): Promise<number> {
  const fence = toFence(update.fence);
  assertRecord(update.set, 'set');
  assertRecord(update.table, 'table');
  const op = update.operators ?? drizzleOperators();
  if (!op) throw new OptionalPeerMissingError('drizzle-orm', 'drizzleFencedUpdate', 'operators');
  const f = fenceFields(update.fields);
  const fenceCol = update.table[f.fence];
  const ownerCol = update.table[f.owner];
  if (!fenceCol || !ownerCol) {
    throw new TypeError(
      `the table has no ${JSON.stringify(f.fence)} or ${JSON.stringify(f.owner)} column for the fence`,
    );
  }
  const token = BigInt(fence.token);
  const guard = op.or(op.lt(fenceCol, token), op.and(op.eq(fenceCol, token), op.eq(ownerCol, fence.owner)));
  const result = await db
    .update(update.table)
    .set({ ...update.set, [f.fence]: token, [f.owner]: fence.owner })
    .where(op.and(update.where, guard));
  const written = affectedRows(result);
  if (written > 0) return written;
  const rows = await db.select({ fence: fenceCol, owner: ownerCol }).from(update.table).where(update.where);
  if (rows.length === 0) return 0;
  throw staleFrom(fence, rows[0]!);
}

/** drizzle-orm's operators, when installed (lib/core/errors/optional-peer.ts). */
function drizzleOperators(): DrizzleOperators | undefined {
  try {
    return require('drizzle-orm') as DrizzleOperators;
  } catch (error) {
    return ifPeerMissing(error, 'drizzle-orm');
  }
}
