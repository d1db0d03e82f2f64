import { LockUpgradeError, LockWrongTypeError } from '../errors';
import type { ScriptCall, ScriptRunner } from '../redis/redis-gateway';
import type { LuaScript } from '../redis/script-library';
import type { AttemptRequest, AttemptResult, HoldRef, ReleaseResult } from './lock-kind';

// What the lock scripts send back and how it is read: the replies and arguments every kind shares,
// and the per-hold release every per-hold kind runs.

/** 'PUBLISH', or 'SPUBLISH' on a Redis 7 Cluster (sharded pub/sub). */
export type PublishCommand = 'PUBLISH' | 'SPUBLISH';

/**
 * The reply of every acquire script: {1, token} granted, {2, token} re-entered, {0, pttl} busy,
 * {-2} re-entry of a lock no longer held, {-3} a pure reader asked to write (upgrade refused),
 * {-1, type, i} foreign data at the lock's i-th key (1 when absent).
 */
export type AttemptReply =
  [code: 1 | 2 | 0, value: number] | [code: -2] | [code: -3] | [code: -1, type: string, index?: number];

/**
 * ARGV of mutex-release.lua (the mutex and the fair lock's holder): the channel and publish command
 * (left out when the script can name them: the lock's channel, PUBLISH), '1' = always publish (the
 * fair lock), and a cohort's bound; left out when they hold their defaults.
 */
export type MutexReleaseArgs =
  | [owner: string, holdId: string]
  | [
      ...HoldReleaseArgs,
      ...([] | [alwaysPublish: '1'] | [alwaysPublish: '0' | '1', keepOut: string, keepOutMs: number]),
    ];

/** 1 released (lock gone), 2 this hold removed but nested holds remain, 0 not held. */
export type HoldReleaseReply = 0 | 1 | 2;

/** ARGV of every per-hold release script (mutex, fair, read-write, semaphore). */
export type HoldReleaseArgs = [owner: string, holdId: string, channel: string, publish: PublishCommand];

/** Per request of a renew script: 1 renewed, 0 gone, -1 taken over. */
export type RenewReply = (1 | 0 | -1)[];

/** Decodes an acquire reply; `redisKeys` are the lock's keys in script order (for foreign-data errors). */
export function decodeAttemptReply(
  reply: AttemptReply,
  key: string,
  redisKeys: readonly string[],
): AttemptResult {
  switch (reply[0]) {
    case 1:
      return { status: 'granted', fencingToken: Number(reply[1]), reentered: false };
    case 2:
      return { status: 'granted', fencingToken: Number(reply[1]), reentered: true };
    case 0:
      return { status: 'busy', retryAfterMs: Number(reply[1]) };
    case -2:
      return { status: 'not-held' };
    case -3:
      throw new LockUpgradeError(key);
    default: {
      const redisKey = redisKeys[(reply[2] ?? 1) - 1] ?? redisKeys[0]!;
      const what = redisKeys.length > 1 ? "this lock's data" : 'a lock';
      throw new LockWrongTypeError(
        key,
        redisKey,
        `holds a ${String(reply[1])} without a lease, which is not ${what}`,
      );
    }
  }
}

/** What a reply that arrived after its command timed out asks for: undo a grant, or leave the queue. */
export function lateReplyAction(reply: AttemptReply): 'release' | 'abandon' | 'none' {
  const code = Array.isArray(reply) ? reply[0] : undefined;
  return code === 1 || code === 2 ? 'release' : code === 0 ? 'abandon' : 'none';
}

/**
 * The call options of every kind's attempt: a reply that comes after the deadline is undone. A late
 * grant is released: the hold this attempt asked for, read now, since a retry of the same call asks
 * for a hold of its own in the same request. A late place in a queue is abandoned by `queue` (a
 * queuing kind: read-write, fair, semaphore), when given.
 */
export function attemptCall(
  kind: { release(h: HoldRef): Promise<unknown> },
  r: AttemptRequest,
  queue?: { abandon(r: AttemptRequest): Promise<void> },
): ScriptCall<AttemptReply> {
  const { owner, holdId } = r;
  return {
    userKey: r.key,
    onLateReply: (late) => {
      const action = lateReplyAction(late);
      // Ignored: a late grant nobody holds ends with its lease when this release fails too.
      if (action === 'release') kind.release({ ...r, owner, holdId }).catch(() => undefined);
      if (action === 'abandon' && queue) void queue.abandon(r);
    },
    timeoutMs: r.timeoutMs,
  };
}

/** Runs a per-hold release script on the lock's keys (lock, aux) and decodes its reply. */
export function releaseHold(
  gateway: ScriptRunner,
  script: LuaScript<HoldReleaseArgs, HoldReleaseReply>,
  h: HoldRef,
): Promise<ReleaseResult>;
export function releaseHold(
  gateway: ScriptRunner,
  script: LuaScript<MutexReleaseArgs, HoldReleaseReply>,
  h: HoldRef,
  alwaysPublish: '0' | '1',
): Promise<ReleaseResult>;
export function releaseHold(
  gateway: ScriptRunner,
  script: LuaScript<HoldReleaseArgs, HoldReleaseReply> | LuaScript<MutexReleaseArgs, HoldReleaseReply>,
  h: HoldRef,
  alwaysPublish?: '0' | '1',
): Promise<ReleaseResult> {
  const { names } = h;
  let args: (string | number)[];
  if (
    alwaysPublish === '0' &&
    !h.yieldTo &&
    gateway.publishCommand === 'PUBLISH' &&
    namedByLock(gateway, names)
  ) {
    // The mutex's common release: mutex-release.lua names the channel and the command itself.
    args = [h.owner, h.holdId];
  } else {
    args = [h.owner, h.holdId, names.channel, gateway.publishCommand];
    // mutex-release.lua's optional arguments, sent only when they are not their defaults.
    if (alwaysPublish !== undefined && h.yieldTo) args.push(alwaysPublish, h.yieldTo.process, h.yieldTo.ms);
    else if (alwaysPublish === '1') args.push('1');
  }
  // A promise chain, not an async function: one promise less on every release.
  return gateway
    .run(script as LuaScript<(string | number)[], HoldReleaseReply>, [names.lock, names.aux], args, {
      userKey: h.key,
    })
    .then(releaseResult);
}

/**
 * True when a script can name the lock's channel as KEYS[1] .. ':ch' (KeySpace names it so): the keys
 * reach Redis as named (no client-side key prefix) and the channel is the lock's. Read without
 * building a string.
 */
function namedByLock(
  gateway: ScriptRunner,
  names: { readonly lock: string; readonly channel: string },
): boolean {
  const { lock, channel } = names;
  return (
    gateway.keysVerbatim === true &&
    channel.length === lock.length + 3 &&
    channel.endsWith(':ch') &&
    channel.startsWith(lock)
  );
}

function releaseResult(reply: HoldReleaseReply): ReleaseResult {
  return reply === 1 ? 'released' : reply === 2 ? 'still-held' : 'not-held';
}
