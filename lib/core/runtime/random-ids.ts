import { randomFillSync } from 'node:crypto';

// The ids that name an owner and a hold in Redis.

const ID_BYTES = 20;
const POOL_IDS = 256;

/**
 * Unguessable ids (20 random bytes = 160 bits, base64url): owner tokens and hold ids. The bytes come
 * from the CSPRNG in pooled batches (one randomFillSync per 256 ids), which costs a fraction of a
 * randomBytes(20) call per id on the hot path of every acquire. The production runtime holds one.
 */
export class PooledRandomIds {
  private pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
  private offset = this.pool.length;

  next(): string {
    if (this.offset + ID_BYTES > this.pool.length) {
      // A fresh buffer each refill: ids already handed out were copied into strings, never reused.
      this.pool = randomFillSync(Buffer.allocUnsafe(ID_BYTES * POOL_IDS));
      this.offset = 0;
    }
    const id = this.pool.toString('base64url', this.offset, this.offset + ID_BYTES);
    this.offset += ID_BYTES;
    return id;
  }
}
