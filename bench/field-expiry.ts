/*
 * Per-field hash expiry (HPEXPIRE, Redis 7.4+ and Valkey 9+) beside the layout the library uses for locks with
 * several holders (read-write and semaphore, lib/core/scripts/holders.lua): a hash of holders plus a zset of
 * their lease deadlines. With per-field expiry the zset could go: each holder's hash field would carry its own
 * TTL. This measures what that would save on the server it is pointed at (docs/SERVERS.md quotes a run):
 *
 *   - memory: MEMORY USAGE of the real layout, written by the library's engine with N readers, beside one hash
 *     with the same fields, each with an HPEXPIRE.
 *
 * (The commands per grant and renewal are counted from the scripts in docs/SERVERS.md; each operation is one
 * script, one round trip, in either layout.)
 *
 *   REDIS_SERVER_BIN=~/.cache/nestjs-distributed-lock/servers/redis-8.0.2/bin/redis-server \
 *     node -r ts-node/register/transpile-only bench/field-expiry.ts
 *
 * The layout is not switched: Redis 7.0 and Valkey 8.1, both in the matrix, have no per-field expiry.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { createLockEngine } from '../lib/core';

const BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const PORT = Number(process.env.FIELD_EXPIRY_PORT ?? 31_999);
const READERS = [1, 8, 64];

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'field-expiry-'));
  const server = spawn(BIN, ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--dir', dir], {
    stdio: 'ignore',
  });
  // Queued until the server listens (ioredis reconnects every 100 ms meanwhile).
  const admin = new Redis(PORT, '127.0.0.1', { retryStrategy: () => 100 });
  admin.on('error', () => undefined);
  try {
    await admin.ping();
    const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1];
    const valkey = /valkey_version:(\S+)/.exec(await admin.info('server'))?.[1];
    console.log(`server: ${valkey ? `Valkey ${valkey}` : `Redis ${version}`}`);
    if (((await admin.call('COMMAND', 'INFO', 'HPEXPIRE')) as unknown[])[0] === null) {
      console.log('no per-field hash expiry (HPEXPIRE) on this server: nothing to compare');
      return;
    }
    // One engine per reader: each engine is one owner, one field of the holders' hash.
    const engines = READERS.slice(-1).flatMap((n) =>
      Array.from({ length: n }, () =>
        createLockEngine({ redis: `redis://127.0.0.1:${PORT}`, keyPrefix: 'fx:', inspection: false }),
      ),
    );
    try {
      console.log('readers | hash + zset (bytes) | hash with field TTLs (bytes)');
      for (const n of READERS) {
        const key = `readers-${n}`;
        const handles = [];
        for (const engine of engines.slice(0, n)) {
          handles.push(await engine.acquire(key, { mode: 'read', leaseMs: 60_000 }));
        }
        const keys = (await admin.keys(`fx:{${key}}:*`)).filter((k) => !k.includes(':fence'));
        let current = 0;
        for (const k of keys) current += Number(await admin.memory('USAGE', k, 'SAMPLES', 0));
        // The same holder fields in one hash, each with its own TTL.
        const hash = (await admin.hgetall(keys.find((k) => k.endsWith(':rw'))!)) as Record<string, string>;
        await admin.del('fx:alt');
        const fields = Object.keys(hash).filter((f) => f.startsWith('o:'));
        await admin.hset('fx:alt', hash);
        await admin.call('HPEXPIRE', 'fx:alt', 60_000, 'FIELDS', fields.length, ...fields);
        await admin.pexpire('fx:alt', 60_000);
        const alternative = Number(await admin.memory('USAGE', 'fx:alt', 'SAMPLES', 0));
        console.log(`${n} | ${current} | ${alternative}`);
        for (const h of handles) await h.release();
        await admin.del('fx:alt');
      }
    } finally {
      await Promise.all(engines.map((e) => e.close()));
    }
  } finally {
    admin.disconnect();
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
