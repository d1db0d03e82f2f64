import { toFence, type FenceSource } from '../fence';
import { staleFrom } from '../sql/fenced-sql';
import { assertRecord } from './orm-fields';
import type { FenceColumns } from '../sql/fenced-sql';

/** The part of a Knex query builder the helper calls (a `Knex` instance or transaction provides it). */
export interface KnexFencedBuilder {
  where(...args: any[]): KnexFencedBuilder;
  update(data: any): PromiseLike<unknown>;
  first(...columns: string[]): PromiseLike<unknown>;
}

/** `knex` itself, or a transaction: called with a table name. */
export type KnexFencedTable = (table: string) => any;

/** A fenced Knex write on `table`: `where` names the row, `set` the columns to write. */
export interface KnexFencedUpdate {
  table: string;
  where: Record<string, unknown>;
  set: Record<string, unknown>;
  fence: FenceSource;
  /** Column names; default `lock_fence`, `lock_owner`. */
  columns?: FenceColumns;
}

/**
 * `knex(table).where(where).where(guard).update(set + fence)`, checking the affected-row count.
 * Resolves to the rows written (0: no row matches); throws StaleFenceError when the fence refuses.
 */
export async function knexFencedUpdate(knex: KnexFencedTable, update: KnexFencedUpdate): Promise<number> {
  const fence = toFence(update.fence);
  assertRecord(update.where, 'where');
  assertRecord(update.set, 'set');
  const fenceCol = update.columns?.fence ?? 'lock_fence';
  const ownerCol = update.columns?.owner ?? 'lock_owner';
  const token = String(fence.token);
  const builder = knex(update.table) as KnexFencedBuilder;
  const written = await builder
    .where(update.where)
    .where((q: any) =>
      q
        .where(fenceCol, '<', token)
        .orWhere((same: any) => same.where(fenceCol, token).where(ownerCol, fence.owner)),
    )
    .update({ ...update.set, [fenceCol]: token, [ownerCol]: fence.owner });
  if (typeof written === 'number' && written > 0) return written;
  const row = (await (knex(update.table) as KnexFencedBuilder)
    .where(update.where)
    .first(`${fenceCol} as fence`, `${ownerCol} as owner`)) as Record<string, unknown> | undefined;
  if (!row) return 0;
  throw staleFrom(fence, row);
}
