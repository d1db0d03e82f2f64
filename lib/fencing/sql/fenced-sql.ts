import { toFence, type Fence, type FenceSource } from '../fence';
import { StaleFenceError } from '../stale-fence.error';
import {
  affectedRows,
  assertDialect,
  parseStoredToken,
  Placeholders,
  quoteIdentifier,
  resultRows,
  type SqlDialect,
} from './sql-dialect';

/** The two columns a fenced table carries; defaults `lock_fence` (BIGINT) and `lock_owner` (text). */
export interface FenceColumns {
  fence?: string;
  owner?: string;
}

/** A guarded UPDATE: the row(s) `where` names get `set`, only when the fence admits the write. */
export interface FencedUpdateSpec {
  dialect: SqlDialect;
  table: string;
  /** column → new value (parameters; the fence columns are added). */
  set: Record<string, unknown>;
  /** column → value, all equal (AND). Name one row, by its primary key. */
  where: Record<string, unknown>;
  /** The writer's fence, or its lock handle. */
  fence: FenceSource;
  columns?: FenceColumns;
}

/** SQL text and its parameters. */
export interface SqlStatement {
  text: string;
  values: unknown[];
}

/** The guarded UPDATE, and the SELECT that reads the stored fence back when it changed no row. */
export interface FencedUpdateStatement extends SqlStatement {
  fence: Fence;
  readFence: SqlStatement;
}

/** Runs one statement; resolves to the driver's result (see {@link fencedUpdate} for each driver). */
export type SqlQuery = (text: string, values: unknown[]) => Promise<unknown> | unknown;

const DEFAULT_COLUMNS = { fence: 'lock_fence', owner: 'lock_owner' } as const;

function fenceColumns(columns: FenceColumns | undefined): Required<FenceColumns> {
  return { fence: columns?.fence ?? DEFAULT_COLUMNS.fence, owner: columns?.owner ?? DEFAULT_COLUMNS.owner };
}

function entriesOf(record: unknown, what: string): [string, unknown][] {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    throw new TypeError(`${what} must be an object of column → value`);
  }
  return Object.entries(record);
}

/**
 * Builds `UPDATE t SET …, lock_fence = T, lock_owner = O WHERE <where> AND (lock_fence < T OR
 * (lock_fence = T AND lock_owner = O))` for the dialect's placeholders. Pure: validates, sends nothing.
 */
export function fencedUpdateSql(spec: FencedUpdateSpec): FencedUpdateStatement {
  assertDialect(spec.dialect);
  const d = spec.dialect;
  const fence = toFence(spec.fence);
  const cols = fenceColumns(spec.columns);
  const table = quoteIdentifier(d, spec.table, 'table');
  const fenceCol = quoteIdentifier(d, cols.fence, 'columns.fence');
  const ownerCol = quoteIdentifier(d, cols.owner, 'columns.owner');
  const set = entriesOf(spec.set, 'set');
  const where = entriesOf(spec.where, 'where');
  if (where.length === 0) throw new TypeError('where must name the row to update (e.g. its primary key)');
  // BIGINT parameters as decimal text for PostgreSQL and MySQL (exact at any size); SQLite binds numbers.
  const token = d === 'sqlite' ? fence.token : String(fence.token);
  const p = new Placeholders(d);
  const assignments = set.map(([column, value]) => {
    if (column === cols.fence || column === cols.owner) {
      throw new TypeError(`set must not write ${column}: the fence columns are written by the helper`);
    }
    return `${quoteIdentifier(d, column, 'set column')} = ${p.add(value)}`;
  });
  assignments.push(`${fenceCol} = ${p.add(token, true)}`, `${ownerCol} = ${p.add(fence.owner, true)}`);
  const conditions = where.map(
    ([column, value]) => `${quoteIdentifier(d, column, 'where column')} = ${p.add(value)}`,
  );
  const guard =
    `(${fenceCol} < ${p.add(token, true)} OR ` +
    `(${fenceCol} = ${p.add(token, true)} AND ${ownerCol} = ${p.add(fence.owner, true)}))`;
  const r = new Placeholders(d);
  const readConditions = where.map(
    ([column, value]) => `${quoteIdentifier(d, column, 'where column')} = ${r.add(value)}`,
  );
  return {
    text: `UPDATE ${table} SET ${assignments.join(', ')} WHERE ${conditions.join(' AND ')} AND ${guard}`,
    values: p.values,
    fence,
    readFence: {
      text: `SELECT ${fenceCol} AS fence, ${ownerCol} AS owner FROM ${table} WHERE ${readConditions.join(' AND ')}`,
      values: r.values,
    },
  };
}

/**
 * Runs the guarded UPDATE through `query` and checks the affected-row count. Resolves to the number
 * of rows written; 0 means no row matches `where`. Throws StaleFenceError (nothing written) when
 * the row exists and its fence refuses the write.
 *
 * `query` per driver: pg `(t, v) => pool.query(t, v)`; mysql2 `(t, v) => conn.execute(t, v)` (connect
 * with `flags: ['FOUND_ROWS']`, or a same-owner write of unchanged values reports 0 rows); better-sqlite3
 * `(t, v) => db.prepare(t)[t.startsWith('SELECT') ? 'all' : 'run'](...v)`; sql.js: `db.run(t, v)` then
 * `{ changes: db.getRowsModified() }` for the UPDATE, the SELECT's rows from `db.prepare(t, v)`.
 */
export async function fencedUpdate(query: SqlQuery, spec: FencedUpdateSpec): Promise<number> {
  const statement = fencedUpdateSql(spec);
  const written = affectedRows(await query(statement.text, statement.values));
  if (written > 0) return written;
  const rows = resultRows(await query(statement.readFence.text, statement.readFence.values));
  if (rows.length === 0) return 0;
  throw staleFrom(statement.fence, rows[0]!);
}

/** The StaleFenceError for a refused write, from the row read back (columns `fence`, `owner`). */
export function staleFrom(fence: Fence, row: Record<string, unknown>): StaleFenceError {
  const stored = row.fence === null || row.fence === undefined ? null : parseStoredToken(row.fence);
  return new StaleFenceError(
    fence.key,
    fence,
    stored === null ? null : { token: stored, owner: String(row.owner ?? '') },
  );
}

/**
 * The migration that adds the two columns to `table`: a 64-bit fence (tokens are about 1.8 × 10^15,
 * a 32-bit INT overflows) and the owner, both NOT NULL with defaults, so existing rows accept any first write.
 */
export function fenceColumnsMigration(dialect: SqlDialect, table: string, columns?: FenceColumns): string {
  assertDialect(dialect);
  const cols = fenceColumns(columns);
  const t = quoteIdentifier(dialect, table, 'table');
  const f = quoteIdentifier(dialect, cols.fence, 'columns.fence');
  const o = quoteIdentifier(dialect, cols.owner, 'columns.owner');
  const ownerType = dialect === 'mysql' ? 'VARCHAR(200)' : 'TEXT';
  const integer = dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  return (
    `ALTER TABLE ${t} ADD COLUMN ${f} ${integer} NOT NULL DEFAULT 0;\n` +
    `ALTER TABLE ${t} ADD COLUMN ${o} ${ownerType} NOT NULL DEFAULT '';\n`
  );
}
