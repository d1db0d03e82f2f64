/** The SQL dialects the builder writes: placeholders `$n` (PostgreSQL) or `?` (MySQL, SQLite). */
export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

const DIALECTS: readonly SqlDialect[] = ['postgres', 'mysql', 'sqlite'];

/** Checks a dialect name before any SQL is written. */
export function assertDialect(dialect: unknown): asserts dialect is SqlDialect {
  if (!DIALECTS.includes(dialect as SqlDialect)) {
    throw new TypeError(`dialect must be one of ${DIALECTS.join(', ')}, got ${JSON.stringify(dialect)}`);
  }
}

/** Quotes an identifier (`schema.table` quotes each part): "x" for PostgreSQL and SQLite, `x` for MySQL. */
export function quoteIdentifier(dialect: SqlDialect, name: unknown, what: string): string {
  if (typeof name !== 'string' || name === '') throw new TypeError(`${what} must be a non-empty string`);
  const quote = dialect === 'mysql' ? '`' : '"';
  return name
    .split('.')
    .map((part) => {
      if (part === '' || part.includes(quote) || part.includes('\0')) {
        throw new TypeError(`${what} ${JSON.stringify(name)} is not a plain identifier`);
      }
      return `${quote}${part}${quote}`;
    })
    .join('.');
}

/** Hands out placeholders in order: `$1, $2…` for PostgreSQL (a value used twice keeps its number), `?` otherwise. */
export class Placeholders {
  readonly values: unknown[] = [];
  private readonly numbered = new Map<unknown, string>();

  constructor(private readonly dialect: SqlDialect) {}

  /** A placeholder for `value`; `reuse` lets PostgreSQL refer to the same parameter again. */
  add(value: unknown, reuse = false): string {
    if (this.dialect !== 'postgres') {
      this.values.push(value);
      return '?';
    }
    if (reuse && this.numbered.has(value)) return this.numbered.get(value)!;
    this.values.push(value);
    const placeholder = `$${this.values.length}`;
    if (reuse) this.numbered.set(value, placeholder);
    return placeholder;
  }
}

/**
 * The number of rows a driver reports for an UPDATE: node-postgres `rowCount`, mysql2 `affectedRows`
 * (also inside its `[result, fields]` pair), better-sqlite3 `changes` (for sql.js, resolve to
 * `{ changes: db.getRowsModified() }`), Knex's number.
 */
export function affectedRows(result: unknown): number {
  if (typeof result === 'number') return result;
  if (Array.isArray(result) && result.length > 0 && !Array.isArray(result[0])) {
    const first = result[0] as Record<string, unknown>;
    if (first && typeof first.affectedRows === 'number') return first.affectedRows;
  }
  const r = (result ?? {}) as Record<string, unknown>;
  for (const field of ['rowCount', 'affectedRows', 'changes', 'affected', 'count']) {
    if (typeof r[field] === 'number') return r[field];
  }
  throw new TypeError(
    'cannot tell how many rows the UPDATE changed: the query function must resolve to a number or a ' +
      'driver result with rowCount (pg), affectedRows (mysql2) or changes (better-sqlite3)',
  );
}

/** The rows a driver returns for a SELECT: node-postgres `rows`, mysql2 `[rows, fields]`, or an array of rows. */
export function resultRows(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result))
    return (Array.isArray(result[0]) ? result[0] : result) as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  if (Array.isArray(rows)) return rows as Record<string, unknown>[];
  throw new TypeError(
    'cannot read the rows of the SELECT: resolve to an array of rows or a result with `rows`',
  );
}

/** A stored fence column's value as a number when it is safe, else a bigint (pg returns BIGINT as text). */
export function parseStoredToken(value: unknown): number | bigint {
  const big = BigInt(value as string | number | bigint);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
