import { ConflictException, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { DistributedLockService, LockLostError } from 'nestjs-distributed-lock';
import { fenceOf, fencedUpdate, StaleFenceError, type SqlQuery } from 'nestjs-distributed-lock/fencing';

@Injectable()
export class StockService implements OnModuleInit, OnApplicationShutdown {
  private readonly pool = new Pool({ connectionString: process.env.DATABASE_URL });

  constructor(private readonly locks: DistributedLockService) {}

  async onModuleInit(): Promise<void> {
    // lock_fence (BIGINT) and lock_owner: the columns the fencing helpers check and write.
    await this.pool.query(`CREATE TABLE IF NOT EXISTS stock (
      sku TEXT PRIMARY KEY,
      qty INTEGER NOT NULL,
      lock_fence BIGINT NOT NULL DEFAULT 0,
      lock_owner TEXT NOT NULL DEFAULT ''
    )`);
  }

  async set(sku: string, qty: number): Promise<void> {
    await this.pool.query(
      'INSERT INTO stock (sku, qty) VALUES ($1, $2) ON CONFLICT (sku) DO UPDATE SET qty = $2',
      [sku, qty],
    );
  }

  async quantity(sku: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ qty: number }>('SELECT qty FROM stock WHERE sku = $1', [sku]);
    return rows[0]?.qty;
  }

  /**
   * Takes `n` under the lock `stock:<sku>`: claim the row with the lock's fence (a write of the fence
   * columns only), read, write with the same fence. A holder that stalled past its lease finds a later
   * holder's claim on the row: PostgreSQL refuses its write (StaleFenceError) and nothing is written.
   * Claiming before reading is what makes the read safe: once a later holder has claimed, no older one
   * can write, so the value it reads stays its own until it writes. No transaction is held open across
   * the slow step, so a stalled holder blocks no one.
   */
  take(sku: string, n: number): Promise<number> {
    return this.locks.using(`stock:${sku}`, { waitMs: 10_000 }, async (lock) => {
      const fence = fenceOf(lock);
      const query: SqlQuery = (text, values) => this.pool.query(text, values);
      try {
        await fencedUpdate(query, { dialect: 'postgres', table: 'stock', set: {}, where: { sku }, fence });
        const qty = await this.quantity(sku);
        if (qty === undefined || qty < n) throw new ConflictException(`not enough ${sku}`);
        await this.slowStep();
        await fencedUpdate(query, {
          dialect: 'postgres',
          table: 'stock',
          set: { qty: qty - n },
          where: { sku },
          fence,
        });
        return qty - n;
      } catch (error) {
        if (error instanceof StaleFenceError || error instanceof LockLostError) {
          throw new ConflictException(`the lock on ${sku} was lost; nothing was written`);
        }
        throw error;
      }
    });
  }

  /** Work between the read and the write (pricing, a call out); SLOW_STEP_MS lets the test stretch it. */
  private async slowStep(): Promise<void> {
    const ms = Number(process.env.SLOW_STEP_MS ?? 0);
    if (ms > 0) await sleep(ms);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
