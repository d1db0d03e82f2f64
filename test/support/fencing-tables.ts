import { EntitySchema } from 'typeorm';

/** The fenced table the SQL, Knex and Drizzle specs write: one counter per row. */
export const COUNTERS_DDL = `
CREATE TABLE IF NOT EXISTS counters (
  id TEXT PRIMARY KEY,
  value INTEGER NOT NULL,
  lock_fence BIGINT NOT NULL DEFAULT 0,
  lock_owner TEXT NOT NULL DEFAULT ''
)`;

/** A row of `counters` as TypeORM maps it (EntitySchema: no decorators, so workers need no metadata). */
export interface CounterRow {
  id: string;
  value: number;
  lockFence: string;
  lockOwner: string;
}

/** The TypeORM entity of the `counters` table. */
export const CounterEntity = new EntitySchema<CounterRow>({
  name: 'Counter',
  tableName: 'counters',
  columns: {
    id: { type: 'text', primary: true },
    value: { type: 'integer' },
    lockFence: { type: 'bigint', name: 'lock_fence', default: 0 },
    lockOwner: { type: 'text', name: 'lock_owner', default: '' },
  },
});
