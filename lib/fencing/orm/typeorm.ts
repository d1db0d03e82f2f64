import { toFence, type FenceSource } from '../fence';
import { staleFrom } from '../sql/fenced-sql';
import { assertRecord, fenceFields, type FenceFields } from './orm-fields';

/** The part of a TypeORM `Repository` the helper calls: its metadata and query builder, and findOne. */
export interface TypeOrmFencedRepository {
  readonly metadata: { findColumnWithPropertyName(property: string): { databaseName: string } | undefined };
  createQueryBuilder(): {
    update(): {
      set(values: any): {
        where(where: any): {
          andWhere(
            where: string,
            parameters: Record<string, unknown>,
          ): { execute(): Promise<{ affected?: number | null }> };
        };
      };
    };
    escape(name: string): string;
  };
  findOne(options: { where: any; select: any }): Promise<unknown>;
}

/** A fenced TypeORM write: `where` names the row (its primary key), `set` the properties to write. */
export interface TypeOrmFencedUpdate {
  where: Record<string, unknown>;
  set: Record<string, unknown>;
  fence: FenceSource;
  /** Entity properties of the fence columns (bigint and text); default `lockFence`, `lockOwner`. */
  fields?: FenceFields;
}

/**
 * An UpdateQueryBuilder guarded by the fence rule, checking `affected`. Resolves to the rows written
 * (0: no row matches); throws StaleFenceError (nothing written) when the fence refuses.
 */
export async function typeormFencedUpdate(
  repository: TypeOrmFencedRepository,
  update: TypeOrmFencedUpdate,
): Promise<number> {
  const fence = toFence(update.fence);
  assertRecord(update.where, 'where');
  assertRecord(update.set, 'set');
  const f = fenceFields(update.fields);
  const column = (property: string): string => {
    const found = repository.metadata.findColumnWithPropertyName(property);
    if (!found) throw new TypeError(`the entity has no property ${JSON.stringify(property)} for the fence`);
    return found.databaseName;
  };
  const qb = repository.createQueryBuilder();
  const fenceCol = qb.escape(column(f.fence));
  const ownerCol = qb.escape(column(f.owner));
  const token = String(fence.token);
  const result = await qb
    .update()
    .set({ ...update.set, [f.fence]: token, [f.owner]: fence.owner })
    .where(update.where)
    .andWhere(
      `(${fenceCol} < :fencingToken OR (${fenceCol} = :fencingToken AND ${ownerCol} = :fencingOwner))`,
      { fencingToken: token, fencingOwner: fence.owner },
    )
    .execute();
  // Drivers that cannot count (TypeORM leaves `affected` undefined) are read back like a refusal.
  if ((result.affected ?? 0) > 0) return result.affected!;
  const row = (await repository.findOne({
    where: update.where,
    select: { [f.fence]: true, [f.owner]: true },
  })) as Record<string, unknown> | null;
  if (!row) return 0;
  if (result.affected === undefined || result.affected === null) {
    throw new TypeError('the TypeORM driver does not report affected rows: use PostgreSQL, MySQL or SQLite');
  }
  throw staleFrom(fence, { fence: row[f.fence], owner: row[f.owner] });
}
