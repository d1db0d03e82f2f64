/*
 * Write batches on an ioredis connection: calls made while replies are pending leave in shared socket
 * writes of at most 8 calls each, a call with nothing in flight is written at once, and every call is
 * answered. The socket's writes are recorded by wrapping its own _write/_writev: Redis is real,
 * nothing is stubbed.
 */
import type Redis from 'ioredis';
import { uniqueKey, useLockEnv } from '../support/lock-env';

const env = useLockEnv();

/** Records how many calls each write of the connection's socket carries, from now on. */
function recordWrites(client: Redis): number[] {
  const stream = client.stream as unknown as {
    _write: (...args: unknown[]) => unknown;
    _writev: (chunks: unknown[], ...rest: unknown[]) => unknown;
  };
  const writes: number[] = [];
  const write = stream._write.bind(stream);
  const writev = stream._writev.bind(stream);
  stream._write = (...args) => {
    writes.push(1);
    return write(...args);
  };
  stream._writev = (chunks, ...rest) => {
    writes.push(chunks.length);
    return writev(chunks, ...rest);
  };
  return writes;
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

describe('write batches (ioredis)', () => {
  it('sends calls made while a reply is pending in shared writes, and answers every one', async () => {
    const client = env.client();
    // No registry: its writes would share the connection (inspection: false).
    const engine = env.engine({ redis: client, inspection: false });
    // Warm: the start-up check has run and the scripts are loaded.
    await (await engine.acquire(uniqueKey('warm'), { leaseMs: 10_000 })).release();
    const writes = recordWrites(client);
    const keys = Array.from({ length: 40 }, (_, i) => uniqueKey(`batch-${i}`));
    // The first call is written at once; the other 39, made while its reply is pending, are batched.
    const handles = await Promise.all(keys.map((key) => engine.acquire(key, { leaseMs: 10_000 })));
    expect(sum(writes)).toBe(40);
    expect(writes[0]).toBe(1);
    expect(Math.max(...writes)).toBeLessThanOrEqual(8);
    // Batched: 39 calls in at most 5 writes (the socket may merge more under backpressure).
    expect(writes.length).toBeLessThanOrEqual(1 + Math.ceil(39 / 8));
    expect(new Set(handles.map((h) => h.fencingToken)).size).toBe(40);
    expect(await env.admin.keys('*batch-*:m')).toHaveLength(40);
    expect(await Promise.all(handles.map((h) => h.release()))).toEqual(keys.map(() => true));
    expect(client.stream.writableCorked).toBe(0);
    expect(await env.admin.keys('*batch-*:m')).toEqual([]);
  });

  it('writes a call with nothing in flight at once, one write per call', async () => {
    const client = env.client();
    const engine = env.engine({ redis: client, inspection: false });
    await (await engine.acquire(uniqueKey('warm'), { leaseMs: 10_000 })).release();
    const writes = recordWrites(client);
    for (let i = 0; i < 5; i++) {
      const lock = engine.acquire(uniqueKey(`lone-${i}`), { leaseMs: 10_000 });
      // Written before the call returns: not held for the end of the tick.
      expect(writes).toHaveLength(2 * i + 1);
      expect(client.stream.writableCorked).toBe(0);
      await (await lock).release();
    }
    expect(writes).toEqual(Array.from({ length: 10 }, () => 1));
  });
});
