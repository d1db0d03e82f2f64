/*
 * An abort wins over an in-flight grant (issue 18, point 7): the caller aborts while the command
 * that wins the lock is on its way (300 ms of latency through the loopback TCP proxy). The call
 * rejects with the abort's reason, and the grant is given back: nobody holds the lock afterwards.
 *
 * @slow latency through a proxy (~14 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait';

const PREFIX = 'inflight:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv({ keyPrefix: PREFIX });
let proxy: TcpProxy;

beforeEach(async () => {
  proxy = await TcpProxy.start(env.server.port);
});
afterEach(async () => {
  await env.cleanup();
  await proxy.close();
});

describe('an abort while the winning command is in flight', () => {
  it.each([
    ['a reentrant mutex', {}],
    ['a token lock', { reentrant: false }],
    ['a write lock', { mode: 'write' }],
  ] as const)('rejects and gives %s back', async (_label, options) => {
    const slow = env.engine({ redis: proxy.url });
    const direct = env.engine();
    const key = uniqueKey('abort');
    // Connected (and the ACL check done) before the latency starts.
    await (await slow.acquire(uniqueKey('warm'), { waitMs: 0 })).release();
    proxy.latency(300);
    const controller = new AbortController();
    const call = slow.acquire(key, { ...options, waitMs: 5_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller left')), 50);
    await expect(call).rejects.toThrow('caller left');
    // The give-back also travels through the slow proxy.
    await waitUntil(
      async () => (await env.admin.keys(`${PREFIX}*{${key}}:*`)).every((k) => k.includes(':fence')),
      {
        description: 'the grant to be given back',
      },
    );
    const other = await direct.tryAcquire(key, { ...options, waitMs: 0 });
    expect(other).not.toBeNull();
    expect(await other!.release()).toBe(true);
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  });
});
