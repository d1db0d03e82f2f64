import { toFence, type FenceSource } from '../fence';
import { staleFrom } from '../sql/fenced-sql';
import { assertRecord, fenceFields, type FenceFields } from './orm-fields';

/**
 * The part of a Prisma model delegate (`prisma.item`) the helper calls: `updateMany` with a where
 * filter, and `findFirst` to read the stored fence back when nothing was written.
 */
export interface PrismaFencedDelegate {
  updateMany(args: { where: any; data: any }): PromiseLike<{ count: number }>;
  findFirst(args: { where: any; select: any }): PromiseLike<Record<string, unknown> | null>;
}

/** A fenced Prisma write: `where` names the row (its `@id` or a unique field), `data` what to set. */
export interface PrismaFencedUpdate {
  where: Record<string, unknown>;
  data: Record<string, unknown>;
  fence: FenceSource;
  /** Model fields of the fence columns (BigInt and String); default `lockFence`, `lockOwner`. */
  fields?: FenceFields;
}

/**
 * `delegate.updateMany` guarded by the fence rule, checking `count`. Resolves to the rows written
 * (0: no row matches `where`); throws StaleFenceError (nothing written) when the fence refuses.
 */
export async function prismaFencedUpdate(
  delegate: PrismaFencedDelegate,
  update: PrismaFencedUpdate,
): Promise<number> {
  const fence = toFence(update.fence);
  assertRecord(update.where, 'where');
  assertRecord(update.data, 'data');
  const f = fenceFields(update.fields);
  const token = BigInt(fence.token);
  const { count } = await delegate.updateMany({
    where: {
      AND: [
        update.where,
        { OR: [{ [f.fence]: { lt: token } }, { [f.fence]: token, [f.owner]: fence.owner }] },
      ],
    },
    data: { ...update.data, [f.fence]: token, [f.owner]: fence.owner },
  });
  if (count > 0) return count;
  const row = await delegate.findFirst({ where: update.where, select: { [f.fence]: true, [f.owner]: true } });
  if (!row) return 0;
  throw staleFrom(fence, { fence: row[f.fence], owner: row[f.owner] });
}
