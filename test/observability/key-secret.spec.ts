/*
 * The key on spans is not reversible: `key: 'hash'` (the default) is an HMAC-SHA-256 under a
 * secret — `keySecret`, shared by an app's replicas to correlate across them, or a random one per
 * process — never the plain SHA-256 that a guessable key (an e-mail address) could be found from.
 */
import { createHash, createHmac } from 'node:crypto';
import { hashKey, instrumentLockEvents, LOCK_ATTRIBUTES as A, OTEL_SPANS } from '../../lib/observability';
import { useLockEnv, whenAborted } from '../support/lock-env';
import { registerTestOtelSdk, TestOtelSdk } from '../support/otel-sdk';

const env = useLockEnv();
let sdk: TestOtelSdk;

beforeEach(() => {
  sdk = registerTestOtelSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

const KEY = 'account:alice@example.com';
const SECRET = 'a-secret-from-the-vault-0123456789';

async function spanKeyHash(options: Parameters<typeof instrumentLockEvents>[1]): Promise<unknown> {
  const engine = env.engine({ keyPrefix: 'otel-secret:' });
  const dispose = instrumentLockEvents(engine.events, options);
  try {
    await (await engine.acquire(KEY)).release();
  } finally {
    dispose();
  }
  const spans = sdk.spans(OTEL_SPANS.wait);
  return spans[spans.length - 1]!.attributes[A.keyHash];
}

describe("span key hashes (key: 'hash')", () => {
  it('are keyed by a per-process secret by default, not a plain SHA-256 of the key', async () => {
    const attribute = await spanKeyHash({});
    const unkeyed = createHash('sha256').update(KEY).digest('hex').slice(0, 16);
    expect(attribute).toMatch(/^[0-9a-f]{16}$/);
    expect(attribute).not.toBe(unkeyed);
    expect(attribute).toBe(hashKey(KEY)); // stable within the process
  });

  it('are the HMAC under keySecret, the same for every replica that shares it', async () => {
    const expected = createHmac('sha256', SECRET).update(KEY).digest('hex').slice(0, 16);
    expect(await spanKeyHash({ keySecret: SECRET })).toBe(expected);
    expect(await spanKeyHash({ keySecret: Buffer.from(SECRET) })).toBe(expected);
    expect(await spanKeyHash({ keySecret: `${SECRET}-other` })).not.toBe(expected);
    expect(hashKey(KEY, SECRET)).toBe(expected);
  });

  it('keep the key out of a lost lock’s span status too', async () => {
    const engine = env.engine({ keyPrefix: 'otel-secret:' });
    const dispose = instrumentLockEvents(engine.events);
    const handle = await engine.acquire(KEY, { leaseMs: 50 });
    await whenAborted(handle.signal);
    await handle.release();
    dispose();
    const [hold] = sdk.spans(OTEL_SPANS.hold);
    expect(hold!.status.message).toBe('lock lost: expired');
    expect(JSON.stringify(hold!.attributes)).not.toContain('alice');
  });

  it('refuses a keySecret that is too short or not a string or bytes', () => {
    const engine = env.engine({ keyPrefix: 'otel-secret:' });
    expect(() => instrumentLockEvents(engine.events, { keySecret: 'short' })).toThrow(RangeError);
    expect(() => instrumentLockEvents(engine.events, { keySecret: 42 as never })).toThrow(TypeError);
  });
});
