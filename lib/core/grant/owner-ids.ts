import { randomFillSync } from 'node:crypto';

// The ids that name an owner and a hold in Redis.

const ID_BYTES = 20;
const POOL_IDS = 256;
let pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let offset = pool.length;

/**
 * An unguessable id (20 random bytes = 160 bits, base64url): owner tokens and hold ids. The bytes
 * come from the CSPRNG in pooled batches (one randomFillSync per 256 ids), which costs a fraction
 * of a randomBytes(20) call per id on the hot path of every acquire.
 */
export function randomId(): string {
  if (offset + ID_BYTES > pool.length) {
    // A fresh buffer each refill: ids already handed out were copied into strings, never reused.
    pool = randomFillSync(Buffer.allocUnsafe(ID_BYTES * POOL_IDS));
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}
