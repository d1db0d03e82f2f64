/*
 * Conformance of the in-memory backend to the Lua scripts, at the script seam: the production lock
 * kinds and multi-key locker run every scenario of conformance/scenarios/ (one file per kind) over a
 * TwinRunner, which sends each script call, with the same KEYS and ARGV, to the RedisGateway (the Lua
 * on a real redis-server) and to MemoryScripts (the TypeScript ports the testing module runs). After
 * every step the spec compares, in one shape: the raw reply of every script call, the pub/sub
 * messages published and the state of every key (type, TTL, content). Then it checks that the
 * scenarios made both sides answer every reply code of every ported script
 * (conformance/script-replies.ts), so a new code or script cannot go untested.
 */
import { FairLock } from '../../lib/core/kinds/fair-lock';
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockKinds } from '../../lib/core/kinds/kind-registry';
import type { AttemptRequest, HoldRef, RenewRequest } from '../../lib/core/kinds/lock-kind';
import { ReadWriteLock } from '../../lib/core/kinds/read-write-lock';
import { ReentrantMutex } from '../../lib/core/kinds/reentrant-mutex';
import { Semaphore } from '../../lib/core/kinds/semaphore';
import { TokenLock } from '../../lib/core/kinds/token-lock';
import { RedisMultiLocker } from '../../lib/core/multi/redis-multi-locker';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { endedByCallersBudget } from '../../lib/core/redis/redis-gateway';
import { defineScript } from '../../lib/core/redis/script-library';
import { ATTEMPT_MARGIN_MS } from '../../lib/core/runtime/with-deadline';
import { PORTED_SCRIPTS } from '../../lib/testing/memory/memory-scripts';
import { startRedis, RedisServerProcess } from '../support/redis-server';
import { sleep } from '../support/wait';
import {
  CONFORMANCE_SETTINGS,
  memorySide,
  redisSide,
  SeamSide,
  TwinRunner,
} from './conformance/conformance-sides';
import { FENCE_BASE, Normalised, normaliseReply, reconcile } from './conformance/normalise';
import { Call, KEY, LONG_MS, SCENARIOS, Step } from './conformance/scenarios';
import { headerCodes, replyCodes, SCRIPT_REPLIES, scriptNames } from './conformance/script-replies';

const TAGS = { mutex: 'm', token: 'm', readWrite: 'rw', fair: 'fair', semaphore: 'sem' } as const;

let server: RedisServerProcess | undefined;
let redis: SeamSide;
let memory: SeamSide;
let twin: TwinRunner;
/** The production kinds and multi-key locker, built as RedisBackend builds them, over the twin. */
let kinds: Required<LockKinds>;
let multiKeys: RedisMultiLocker;
/** Script → the reply codes each side answered during the scenarios. */
const seen: Record<SeamSide['name'], Map<string, Set<number>>> = { redis: new Map(), memory: new Map() };

beforeAll(async () => {
  server = await startRedis();
  redis = await redisSide(server.url, 'conf:*');
  memory = memorySide();
  twin = new TwinRunner(redis, memory);
  const { fenceTtlMs, waiterTtlMs } = CONFORMANCE_SETTINGS;
  kinds = {
    mutex: new ReentrantMutex(twin, fenceTtlMs),
    token: new TokenLock(twin, fenceTtlMs),
    readWrite: new ReadWriteLock(twin, fenceTtlMs, waiterTtlMs),
    fair: new FairLock(twin, fenceTtlMs, waiterTtlMs),
    semaphore: new Semaphore(twin, fenceTtlMs, waiterTtlMs),
  };
  multiKeys = new RedisMultiLocker(twin, fenceTtlMs);
});

afterAll(async () => {
  await Promise.all([redis?.close(), memory?.close()]);
  await server?.stop();
});

/** The options a kind reads from a call. */
function optionsOf(call: Call): LockOptions {
  if (call.kind === 'token') return { reentrant: false };
  if (call.kind === 'readWrite') return { mode: call.mode ?? 'read' };
  if (call.kind === 'fair') return { fair: true };
  if (call.kind === 'semaphore')
    return { limit: call.limit ?? 1, ...(call.permits && { permits: call.permits }) };
  return {};
}

/** The hold a call names, on the scenario's keys. */
function holdOf(keys: KeySpace, call: Call): HoldRef {
  const key = call.key ?? KEY;
  return {
    key,
    names: keys.names(key, TAGS[call.kind]),
    owner: `owner-${call.who}`,
    holdId: `hold-${call.hold ?? 'h1'}`,
    options: optionsOf(call),
  };
}

/** The Redis key a seed or raw step names: one of the lock's keys, or its fair-lock deadlines hash. */
function keyAt(keys: KeySpace, step: { tag: Parameters<KeySpace['names']>[1]; key?: string }, at: string) {
  const names = keys.names(step.key ?? KEY, step.tag);
  const named: Record<string, string> = { ...names, deadlines: `${names.aux}:dl` };
  return named[at]!;
}

/** Runs one step through the kinds over the twin; returns the decoded reply (or error), if any. */
async function perform(keys: KeySpace, step: Step): Promise<unknown> {
  if (step.do === 'sleep') return undefined;
  if (step.do === 'seed') {
    const key = keyAt(keys, step, step.at);
    await Promise.all([redis, memory].map((side) => side.seed(key, step.fixture)));
    return undefined;
  }
  try {
    if (step.do === 'script') {
      const keysOf = step.keys.map((at) => keyAt(keys, step, at));
      return await twin.run(defineScript(step.script), keysOf, step.args, { userKey: KEY });
    }
    if (step.do === 'multi') {
      const reentrant = step.reentrant !== false;
      return await multiKeys.attempt({
        targets: step.keys.map((key) => ({ key, names: keys.names(key) })),
        kind: reentrant ? kinds.mutex : kinds.token,
        owner: `owner-${step.who}`,
        holdId: `hold-${step.hold ?? 'h1'}`,
        leaseMs: LONG_MS,
        options: reentrant ? {} : { reentrant: false },
        timeoutMs: CONFORMANCE_SETTINGS.commandTimeoutMs,
      });
    }
    const kind = kinds[step.kind];
    if (step.do === 'renew') {
      const requests: RenewRequest[] = step.who.map((who) => ({
        ...holdOf(keys, { kind: step.kind, who }),
        leaseMs: step.leaseMs ?? LONG_MS,
      }));
      return await kind.renew(requests);
    }
    const hold = holdOf(keys, step);
    if (step.do === 'release')
      return await kind.release({ ...hold, ...(step.yieldTo && { yieldTo: step.yieldTo }) });
    if (step.do === 'abandon') {
      const process = step.process !== undefined ? { process: step.process } : {};
      return await kind.abandon?.({ ...hold, leaseMs: LONG_MS, reenter: false, ...process });
    }
    const request: AttemptRequest = {
      ...hold,
      leaseMs: step.leaseMs ?? LONG_MS,
      reenter: step.reenter === true,
      ...(step.reserve !== undefined && { reserveTokens: step.reserve }),
      ...(step.process !== undefined && { process: step.process }),
      // As a tryAcquire: no time left to wait beyond the attempt itself.
      ...(step.noWait === true && { timeoutMs: ATTEMPT_MARGIN_MS + 1 }),
    };
    return await kind.attempt(request);
  } catch (err) {
    return err;
  }
}

/** What one side shows after a step: its raw replies to the step's calls, its publishes and its keys. */
async function observe(side: SeamSide, calls: ReturnType<TwinRunner['drain']>, prefix: string) {
  const now = await side.nowMs();
  const scripts = calls.map(({ script, replies }): [string, Normalised] => {
    const codes = seen[side.name].get(script) ?? new Set<number>();
    const reply = normaliseReply(replies[side.name], now);
    replyCodes(script, reply).forEach((c) => codes.add(c));
    seen[side.name].set(script, codes);
    return [script, reply];
  });
  return { scripts, published: await side.published(), state: await side.state(prefix) };
}

/** The short name of a decoded reply, as a scenario's `want` states it. */
function verdict(reply: unknown): unknown {
  if (reply instanceof Error) return reply.name;
  if (Array.isArray(reply) || typeof reply === 'string') return reply;
  if (reply && typeof reply === 'object' && 'status' in reply) {
    const r = reply as { status: string; reentered?: boolean };
    return r.status === 'granted' && r.reentered ? 'reentered' : r.status;
  }
  return reply;
}

const byNumber = (a: number, b: number): number => a - b;

let scenarioIndex = 0;
for (const [group, scenarios] of Object.entries(SCENARIOS)) {
  describe(`conformance of the in-memory scripts of the ${group} to their Lua`, () => {
    for (const scenario of scenarios) {
      const prefix = `conf:${++scenarioIndex}:`;
      it(scenario.name, async () => {
        const keys = new KeySpace(prefix);
        if (!scenario.freshFence) {
          const fence = {
            type: 'string' as const,
            value: String(FENCE_BASE),
            ttlMs: CONFORMANCE_SETTINGS.fenceTtlMs,
          };
          await Promise.all([redis, memory].map((side) => side.seed(keys.names(KEY).fence, fence)));
        }
        for (const [index, step] of scenario.steps.entries()) {
          if (step.do === 'sleep') await sleep(step.ms);
          const reply = await perform(keys, step);
          const calls = twin.drain();
          const [onRedis, onMemory] = [
            await observe(redis, calls, prefix),
            await observe(memory, calls, prefix),
          ];
          const [fromMemory, fromRedis] = reconcile(onMemory as Normalised, onRedis as Normalised);
          // Both sides were sent exactly these calls.
          const sent = calls.map(
            ({ script, keys: k, args }) => `${script} KEYS ${k.join(' ')} ARGV ${args.join(' ')}`,
          );
          const label = `step ${index}: ${JSON.stringify(step)}`;
          expect({ step: label, sent, ...(fromMemory as object) }).toEqual({
            step: label,
            sent,
            ...(fromRedis as object),
          });
          if ('want' in step && step.want !== undefined) {
            expect({ step: label, got: verdict(reply) }).toEqual({ step: label, got: step.want });
          }
        }
      });
    }
  });
}

describe('the seam bounds a call by its timeoutMs', () => {
  it('rejects a reply that comes later on both sides, and hands the reply to onLateReply', async () => {
    const names = new KeySpace('conf:late:').names(KEY);
    const acquire = defineScript('mutex-acquire');
    const args = (hold: string) =>
      ['owner-A', hold, LONG_MS, CONFORMANCE_SETTINGS.fenceTtlMs, 1, '', '1'] as const;
    const keys = [names.lock, names.fence, names.aux];
    for (const side of [redis, memory]) {
      // A first call in time (it also loads the script, so the late one is a single EVALSHA).
      await side.runner.run(acquire, keys, [...args('hold-h1')]);
      let onLateReply: (reply: unknown) => void = () => undefined;
      const lateReply = new Promise<unknown>((resolve) => (onLateReply = resolve));
      const sent = side.late(
        () =>
          side.runner.run(acquire, keys, [...args('hold-h2')], { userKey: KEY, timeoutMs: 50, onLateReply }),
        300,
      );
      const err = await sent.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ name: 'LockRedisError', message: /within 50 ms/ });
      // Both sides mark it as ended by the call's own budget (an acquisition then reports busy).
      expect({ side: side.name, byCallersBudget: endedByCallersBudget(err) }).toEqual({
        side: side.name,
        byCallersBudget: true,
      });
      expect({ side: side.name, late: await lateReply }).toEqual({
        side: side.name,
        late: [2, expect.any(Number)],
      });
    }
  });
});

describe('conformance coverage', () => {
  it('lists every Lua script in the reply table', () => {
    expect(scriptNames()).toEqual(Object.keys(SCRIPT_REPLIES).sort());
  });

  it('has a port for exactly the scripts the table lists with reply codes', () => {
    const withCodes = Object.entries(SCRIPT_REPLIES).filter(([, entry]) => 'codes' in entry);
    expect([...PORTED_SCRIPTS].sort()).toEqual(withCodes.map(([name]) => name).sort());
  });

  it('lists for each script the reply codes its header names', () => {
    for (const name of scriptNames()) {
      const entry = SCRIPT_REPLIES[name];
      const listed = entry && 'codes' in entry ? [...entry.codes] : [];
      const fromHeader = entry && 'redisOnly' in entry ? [] : headerCodes(name);
      expect({ name, codes: listed.sort(byNumber) }).toEqual({ name, codes: fromHeader.sort(byNumber) });
    }
  });

  it('made both sides answer every reply code of every ported script', () => {
    for (const [name, entry] of Object.entries(SCRIPT_REPLIES)) {
      if (!('codes' in entry)) continue;
      for (const side of ['redis', 'memory'] as const) {
        const answered = [...(seen[side].get(name) ?? [])].sort(byNumber);
        expect({ name, side, answered }).toEqual({ name, side, answered: [...entry.codes].sort(byNumber) });
      }
    }
  });
});
