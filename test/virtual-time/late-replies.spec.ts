/*
 * Replies that come just after their deadline, in virtual time: the fault point the engine exposes to
 * the simulator (Runtime.faultPoint, 'reply-after-deadline'; BUGGIFY in FoundationDB's terms), which no
 * real network times on purpose. The script ran; the caller heard a timeout. An acquisition's late
 * grant is undone, so the key is free again for the next caller; a watchdog whose renewals all land
 * late tells its holder before Redis lets the key go, and nobody else is granted it meanwhile. The last
 * spec loses a reply instead (the network): a shortening extend() must not wait for its answer.
 */
import { LockLostError, LockRedisError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { VirtualLab } from '../sim/virtual-lab';

const lock = (key: string): string => new KeySpace('lock:').names(key, 'm').lock;

let lab: VirtualLab;
beforeEach(() => {
  lab = new VirtualLab();
});
afterEach(async () => {
  await lab.close();
});

it('an acquisition whose grant lands after its deadline fails, and the late grant is undone', async () => {
  const caller = await lab.warmProcess();
  const other = await lab.warmProcess();
  caller.process.lateReplies = { probability: 1, scripts: (name) => name === 'mutex-acquire' };
  const failed = await lab.settle(caller.engine.acquire('order:1', { waitMs: 0 })).catch((e: unknown) => e);
  expect(failed).toBeInstanceOf(LockRedisError);
  // The script ran and granted; the late reply's undo released it one round trip later.
  const [grant] = lab.runs('mutex-acquire').slice(-1);
  expect(grant!.reply).toEqual([1, expect.any(Number)]);
  await lab.advance(2);
  expect(lab.pttl(lock('order:1'))).toBe(-2);
  expect(caller.engine.stats()).toMatchObject({ held: 0 });
  caller.process.lateReplies = { probability: 0 };
  const next = await lab.settle(other.engine.acquire('order:1', { waitMs: 0 }));
  expect(next.fencingToken).toBeGreaterThan(0);
  await lab.settle(next.release());
});

it('a watchdog whose renewals all land late tells its holder before Redis frees the key for anyone else', async () => {
  const holder = await lab.warmProcess({ watchdogLeaseMs: 900, renewEveryMs: 300 });
  const other = await lab.warmProcess();
  const handle = await lab.settle(holder.engine.acquire('job:1'));
  const told = lab.abortOf(handle.signal);
  holder.process.lateReplies = { probability: 1, scripts: (name) => name === 'renew' };
  let grantedAt: number | undefined;
  void other.engine.acquire('job:1', { waitMs: 10_000 }).then(async (h) => {
    grantedAt = lab.now;
    await h.release();
  });
  await lab.until(() => told.at !== undefined);
  expect(handle.signal.reason).toBeInstanceOf(LockLostError);
  expect(['expired', 'renewal-failed']).toContain((handle.signal.reason as LockLostError).reason);
  // Redis ran the renewals: the key lives on, and nobody else has it yet.
  expect(lab.pttl(lock('job:1'))).toBeGreaterThan(0);
  expect(grantedAt).toBeUndefined();
  const lastRenewal = lab.runs('renew').at(-1)!;
  await lab.until(() => grantedAt !== undefined);
  expect(grantedAt!).toBeGreaterThan(told.at!);
  // Not before the lease the last renewal set in Redis ran out.
  expect(lastRenewal.at).toBeLessThan(told.at!);
  expect(grantedAt!).toBeGreaterThanOrEqual(lastRenewal.at + 900);
});

it('an extend() that shortens the lease and gets no answer ends the lease here no later than in Redis', async () => {
  const holder = await lab.warmProcess();
  const other = await lab.warmProcess();
  const handle = await lab.settle(holder.engine.acquire('order:2', { leaseMs: 60_000 }));
  const told = lab.abortOf(handle.signal);
  holder.process.lateReplies = { probability: 1, scripts: (name) => name === 'renew' };
  const sentAt = lab.now;
  // Redis runs it (the lease there is 200 ms from now); the answer comes after its deadline.
  expect(await lab.settle(handle.extend(200)).catch((e: unknown) => e)).toBeInstanceOf(LockRedisError);
  expect(lab.runs('renew').at(-1)!.reply).toEqual([1]);
  let grantedAt: number | undefined;
  void other.engine.acquire('order:2', { waitMs: 5_000 }).then(async (h) => {
    grantedAt = lab.now;
    await h.release();
  });
  await lab.until(() => told.at !== undefined);
  // Told at the shortened lease's local end, before Redis lets the key go and anyone else has it.
  expect(told.at!).toBeLessThanOrEqual(sentAt + 200);
  expect(grantedAt).toBeUndefined();
  await lab.until(() => grantedAt !== undefined);
  expect(grantedAt!).toBeGreaterThan(sentAt + 200);
});

it('an extend() that shortens the lease ends it here at its end while the answer is still on its way', async () => {
  // Seed 5604: Redis ran the shortening extend() at once, its answer was lost, and the call waited for
  // its command timeout (longer than the shortened lease) before ending the lease here; meanwhile
  // Redis let the key go and granted it to another process.
  const holder = await lab.warmProcess({ commandTimeoutMs: 1_000 });
  const other = await lab.warmProcess();
  const handle = await lab.settle(holder.engine.acquire('order:3', { leaseMs: 60_000 }));
  const told = lab.abortOf(handle.signal);
  // Loads the renew script: a NOSCRIPT answer lost below would keep the script from running at all.
  await lab.settle(handle.extend(60_000));
  holder.network.dropReply = 1;
  const sentAt = lab.now;
  const extended = lab.watch(handle.extend(200));
  await lab.advance(5);
  // Redis runs it: the lease there is 200 ms from about now.
  expect(lab.runs('renew').at(-1)!.reply).toEqual([1]);
  let grantedAt: number | undefined;
  void other.engine.acquire('order:3', { waitMs: 5_000 }).then(async (h) => {
    grantedAt = lab.now;
    await h.release();
  });
  await lab.until(() => grantedAt !== undefined);
  // The holder was told first, at the shortened lease's local end, before the answer's deadline.
  expect(told.at).toBeDefined();
  expect(told.at!).toBeLessThanOrEqual(sentAt + 200);
  expect(told.at!).toBeLessThan(grantedAt!);
  expect((handle.signal.reason as LockLostError).reason).toBe('expired');
  await lab.until(() => extended.error !== undefined);
  expect(extended.error).toBeInstanceOf(LockRedisError);
});
