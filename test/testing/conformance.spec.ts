/*
 * Conformance of the in-memory backend to the Lua scripts: every scenario of
 * conformance/scenarios/ (one file per kind) runs step by step against the Redis kinds (the Lua on a real
 * redis-server) and against the in-memory kinds, and after every step compares, in one shape:
 * the decoded reply (AttemptResult / ReleaseResult / RenewResult, or the error), the raw script
 * replies, the pub/sub messages published and the state of every key of the lock (type, TTL,
 * content). Then it checks that the scenarios made both backends answer every reply code of every
 * script (conformance/script-replies.ts), so a new code or script cannot go untested.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { AttemptRequest, HoldRef, RenewRequest } from '../../lib/core/kinds/lock-kind';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { ATTEMPT_MARGIN_MS } from '../../lib/core/waiting/with-deadline';
import { startRedis, RedisServerProcess } from '../support/redis-server';
import { sleep } from '../support/wait';
import {
  ConformanceSide,
  CONFORMANCE_SETTINGS,
  memorySide,
  redisSide,
} from './conformance/conformance-sides';
import { FENCE_BASE, Normalised, normaliseReply, reconcile } from './conformance/normalise';
import { Call, LONG_MS, SCENARIOS, Step } from './conformance/scenarios/index';
import { headerCodes, replyCodes, SCRIPT_REPLIES, scriptNames } from './conformance/script-replies';

const KEY = 'conformance-key';
const TAGS = { mutex: 'm', token: 'm', readWrite: 'rw', fair: 'fair', semaphore: 'sem' } as const;

let server: RedisServerProcess | undefined;
let redis: ConformanceSide;
let memory: ConformanceSide;
/** Script → the reply codes each side answered during the scenarios. */
const seen: Record<'redis' | 'memory', Map<string, Set<number>>> = { redis: new Map(), memory: new Map() };

beforeAll(async () => {
  server = await startRedis();
  redis = await redisSide(server.url, 'conf:*');
  memory = memorySide();
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
  return {
    key: KEY,
    names: keys.names(KEY, TAGS[call.kind]),
    owner: `owner-${call.who}`,
    holdId: `hold-${call.hold ?? 'h1'}`,
    options: optionsOf(call),
  };
}

/** Runs one step on one side; returns its decoded reply (or error), or undefined for a seed/sleep. */
async function perform(side: ConformanceSide, keys: KeySpace, step: Step): Promise<unknown> {
  if (step.do === 'sleep') return undefined;
  if (step.do === 'seed') {
    const names = keys.names(KEY, step.tag);
    const at = { lock: names.lock, aux: names.aux, deadlines: `${names.aux}:dl`, fence: names.fence };
    const key = at[step.at];
    await side.seed(key, step.fixture);
    return undefined;
  }
  const kind = side.kinds[step.kind];
  try {
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

/** Everything one side shows after one step, normalised. */
async function observe(side: ConformanceSide, keys: KeySpace, prefix: string, step: Step) {
  const reply = await perform(side, keys, step);
  const now = await side.nowMs();
  const trace = await side.drain();
  for (const [script, raw] of trace.scripts) {
    const codes = seen[side.name].get(script) ?? new Set<number>();
    replyCodes(script, raw).forEach((c) => codes.add(c));
    seen[side.name].set(script, codes);
  }
  return {
    outcome: { reply: normaliseReply(reply, now), ...trace, state: await side.state(prefix) },
    reply,
  };
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

function describeStep(step: Step): string {
  return JSON.stringify(step);
}

let scenarioIndex = 0;
for (const [group, scenarios] of Object.entries(SCENARIOS)) {
  describe(`conformance of the in-memory ${group} to its Lua scripts`, () => {
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
          const onRedis = await observe(redis, keys, prefix, step);
          const onMemory = await observe(memory, keys, prefix, step);
          const [fromMemory, fromRedis] = reconcile(
            onMemory.outcome as Normalised,
            onRedis.outcome as Normalised,
          );
          const label = `step ${index}: ${describeStep(step)}`;
          expect({ step: label, ...(fromMemory as object) }).toEqual({
            step: label,
            ...(fromRedis as object),
          });
          if ('want' in step && step.want !== undefined) {
            expect({ step: label, got: verdict(onRedis.reply) }).toEqual({ step: label, got: step.want });
          }
        }
      });
    }
  });
}

describe('conformance coverage', () => {
  it('lists every Lua script in the reply table', () => {
    expect(scriptNames()).toEqual(Object.keys(SCRIPT_REPLIES).sort());
  });

  it('lists for each script the reply codes its header names', () => {
    for (const name of scriptNames()) {
      const entry = SCRIPT_REPLIES[name];
      const listed = entry && 'codes' in entry ? [...entry.codes] : [];
      const fromHeader = entry && 'redisOnly' in entry ? [] : headerCodes(name);
      expect({ name, codes: listed.sort(byNumber) }).toEqual({ name, codes: fromHeader.sort(byNumber) });
    }
  });

  it('made both backends answer every reply code of every ported script', () => {
    for (const [name, entry] of Object.entries(SCRIPT_REPLIES)) {
      if (!('codes' in entry)) continue;
      for (const side of ['redis', 'memory'] as const) {
        const answered = [...(seen[side].get(name) ?? [])].sort(byNumber);
        expect({ name, side, answered }).toEqual({ name, side, answered: [...entry.codes].sort(byNumber) });
      }
    }
  });
});
