/*
 * An abort that arrives while the winning command is in flight wins (docs/GUARANTEES.md): the grant is
 * given back and the call rejects with the abort's reason, in virtual time. The give-back is not waited
 * for: a server under CLIENT PAUSE (or a connection gone) would otherwise hold the call a command timeout
 * past its waitMs. Found by the simulator (seed 3997: a semaphore call with waitMs 0 aborted while its
 * grant was on its way; the give-back was lost and the call settled 439 ms after it asked, when the
 * give-back's command timeout ran out). The give-back still runs once the server serves again.
 */
import { KeySpace, type LockKindTag } from '../../lib/core/kinds/key-space';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { VirtualLab } from '../sim/virtual-lab';

let lab: VirtualLab;
beforeEach(() => {
  lab = new VirtualLab();
});
afterEach(async () => {
  await lab.close();
});

const ENGINE = { commandTimeoutMs: 1_000 };

const kinds: [string, LockOptions, LockKindTag][] = [
  ['reentrant mutex', {}, 'm'],
  ['semaphore', { limit: 2 }, 'sem'],
  ['write lock', { mode: 'write' }, 'rw'],
];

describe.each(kinds)('a %s call aborted while its grant is on its way', (_kind, options, tag) => {
  const lock = (key: string): string => new KeySpace('lock:').names(key, tag).lock;

  it('rejects at the grant, without waiting for a give-back the paused server holds', async () => {
    const caller = await lab.warmProcess(ENGINE);
    await lab.warm(caller.engine, options);
    const controller = new AbortController();
    const asked = lab.now;
    const call = lab.watch(
      caller.engine.acquire('stock:1', { ...options, waitMs: 0, signal: controller.signal }),
    );
    // The attempt reached the server (0.5 ms) and won; its answer is on the way back (0.5 ms more).
    await lab.advance(0.6);
    expect(lab.runs(undefined, asked).filter((r) => Array.isArray(r.reply) && r.reply[0] === 1)).toHaveLength(
      1,
    );
    // CLIENT PAUSE from now on for 3 s: the give-back will wait in the server. The caller leaves.
    lab.server.pause(3_000);
    controller.abort(new Error('caller left'));
    await lab.until(() => call.at !== undefined);
    expect((call.error as Error).message).toBe('caller left');
    // Settled when the grant's answer came back, not at the give-back's command timeout (1 s later).
    expect(call.at! - asked).toBeCloseTo(1, 6);
    expect(caller.engine.stats()).toMatchObject({ held: 0 });
    // The give-back runs when the pause ends: nothing of the grant is left then.
    expect(lab.pttl(lock('stock:1'))).toBeGreaterThan(0);
    await lab.advance(3_000);
    expect(lab.pttl(lock('stock:1'))).toBe(-2);
  });
});

describe('a multi-key call aborted while its round is on its way', () => {
  it('rejects at the round, without waiting for the give-back', async () => {
    const caller = await lab.warmProcess(ENGINE);
    // The multi-key script loaded first, as lab.warm() does for a kind.
    await lab.settle(
      (await lab.settle(caller.engine.acquire(['lab:a', 'lab:b'], { leaseMs: 1_000 }))).release(),
    );
    const controller = new AbortController();
    const asked = lab.now;
    const call = lab.watch(
      caller.engine.acquire(['stock:1', 'stock:2'], { waitMs: 0, signal: controller.signal }),
    );
    await lab.advance(0.6);
    lab.server.pause(3_000);
    controller.abort(new Error('caller left'));
    await lab.until(() => call.at !== undefined);
    expect((call.error as Error).message).toBe('caller left');
    expect(call.at! - asked).toBeCloseTo(1, 6);
    await lab.advance(3_000);
    expect(lab.pttl(new KeySpace('lock:').names('stock:1', 'm').lock)).toBe(-2);
    expect(lab.pttl(new KeySpace('lock:').names('stock:2', 'm').lock)).toBe(-2);
  });
});
