import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { DistributedLockService } from '../../lib';
import { currentFence, fencedUpdate, type SqlQuery } from '../../lib/fencing';
import type { FencedRecord } from './fenced-store';
import { lockKey } from './inventory-lock';
import { checkedQuantities, InventoryStore } from './inventory-store';

/** The table, with the two fence columns (for an existing table: `fenceColumnsMigration('postgres', 'inventory')`). */
const INVENTORY_DDL = `
CREATE TABLE IF NOT EXISTS inventory (
  sku TEXT PRIMARY KEY,
  qty INTEGER NOT NULL DEFAULT 0 CHECK (qty >= 0),
  lock_fence BIGINT NOT NULL DEFAULT 0,
  lock_owner TEXT NOT NULL DEFAULT ''
)`;

/**
 * InventoryStore on PostgreSQL (`DATABASE_URL`), every write a guarded UPDATE of the fencing SQL
 * helper: refused, with StaleFenceError and nothing written, when a later grant of the SKU's lock
 * already wrote. `pg` is loaded only here, when the app is configured for PostgreSQL.
 */
export class PostgresInventoryStore extends InventoryStore implements OnApplicationShutdown {
  private readonly logger = new Logger('PostgresInventoryStore');

  private constructor(
    private readonly pool: Pool,
    private readonly locks: DistributedLockService,
  ) {
    super();
    // An idle client's error (server restart, network): log it; the pool replaces the client.
    pool.on('error', (error) => this.logger.error(`PostgreSQL connection lost: ${error.message}`));
  }

  /** Connects to `url` and creates the table when missing (replicas starting together are serialized). */
  static async connect(url: string, locks: DistributedLockService): Promise<PostgresInventoryStore> {
    const { Pool } = await import('pg');
    const store = new PostgresInventoryStore(new Pool({ connectionString: url, max: 10 }), locks);
    try {
      await store.transaction(async (query) => {
        await query("SELECT pg_advisory_xact_lock(hashtext('sample-app inventory schema'))", []);
        await query(INVENTORY_DDL, []);
      });
    } catch (error) {
      await store.pool.end();
      throw error;
    }
    return store;
  }

  async read(sku: string): Promise<FencedRecord> {
    const { rows } = await this.pool.query('SELECT qty, lock_fence FROM inventory WHERE sku = $1', [sku]);
    return { sku, qty: rows[0]?.qty ?? 0, fence: Number(rows[0]?.lock_fence ?? 0) };
  }

  /**
   * One transaction: create missing rows, CLAIM each row with the lock's fence (a fenced UPDATE that
   * writes only the fence), read, write the new quantities. Claiming before reading means that a
   * holder paused past its lease cannot write between this grant's read and its write: the claim
   * already refuses it (docs/FENCING.md, "claim before you read").
   */
  update(skus: readonly string[], change: (quantities: number[]) => number[]): Promise<FencedRecord[]> {
    return this.transaction(async (query) => {
      await query('INSERT INTO inventory (sku) SELECT unnest($1::text[]) ON CONFLICT (sku) DO NOTHING', [
        [...skus],
      ]);
      for (const sku of skus) await this.writeFenced(query, sku, {});
      const { rows } = (await query('SELECT sku, qty FROM inventory WHERE sku = ANY($1)', [[...skus]])) as {
        rows: { sku: string; qty: number }[];
      };
      const current = skus.map((sku) => rows.find((r) => r.sku === sku)!.qty);
      const quantities = checkedQuantities(skus, change(current));
      const written: FencedRecord[] = [];
      for (const [i, sku] of skus.entries()) {
        const qty = quantities[i]!;
        written.push({ sku, qty, fence: await this.writeFenced(query, sku, { qty }) });
      }
      return written;
    });
  }

  /**
   * The repository method: writes `set` to the row of `sku` with the fence of the lock this async
   * context holds on the SKU (currentFence throws when it holds none), through the SQL helper.
   * Resolves to the token written; a refused write throws StaleFenceError.
   */
  private async writeFenced(query: SqlQuery, sku: string, set: { qty?: number }): Promise<number> {
    const fence = currentFence(this.locks, lockKey(sku));
    await fencedUpdate(query, { dialect: 'postgres', table: 'inventory', set, where: { sku }, fence });
    return Number(fence.token);
  }

  /** Runs `work` in BEGIN … COMMIT on one pooled connection; ROLLBACK when it throws. */
  private async transaction<T>(work: (query: SqlQuery) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work((text, values) => client.query(text, values));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is discarded (release(error)), not returned to the pool.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
