import {
  LockLostError,
  LockNotAcquiredError,
  LockPartialReentryError,
  LockServiceClosedError,
  LockUpgradeError,
} from '../errors';
import {
  kindOf,
  type LockKind,
  type AttemptRequest,
  type AttemptResult,
  type KeySpace,
  type LockKeyNames,
} from '../kinds/lock-kind';
import { MultiAcquisition } from '../multi/multi-acquisition';
import { PerKeyLocker, type MultiKeyLocker, type MultiLockTarget } from '../multi/multi-key-locker';
import { assertMultiKeyOptions, multiLockKeys } from '../multi/multi-keys';
import { MultiGrantHandle, type MultiLockHandle } from '../multi/multi-lock-handle';
import type { LockOptions, ResolvedEngineOptions } from '../options/lock-options';
import { assertLockKey, callLockOptions } from '../options/validation';
import { type LocalWaitQueues, type Ticket, Waiter } from '../waiting/waiter';
import { ATTEMPT_MARGIN_MS } from '../time/with-deadline';
import { monotonicMs } from '../time/deadlines';
import type { LockBackend, WakeupChannels } from './lock-backend';
import type { LockEvents } from '../events/lock-events';
import {
  heldInScope,
  randomId,
  GrantHandle,
  type HeldLocks,
  LockGrant,
  LockHandle,
} from '../grant/lock-grant';

/*
 * One lock call, top-down: LockRequests turns acquire / tryAcquire / using, with one key or many,
 * into a request (validated options, kind, Redis names, wait and lease), re-enters a lock this async
 * context holds, or starts an Acquisition: the wait for one key, which ends in a LockGrant
 * (lock-grant.ts). Several keys wait in MultiAcquisition (multi/).
 */

/** What one call asks for, whatever the number of keys: validated options and their consequences. */
interface CallShape {
  readonly options: LockOptions;
  readonly kind: LockKind;
  readonly kindLabel: string;
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly watchdog: boolean;
}

/**
 * Turns one acquire / tryAcquire / using call, with one key or many, into its request: key and
 * options validated before any I/O, the kind, the Redis names, the wait and the lease with the
 * engine's defaults, and then either a re-entry (this async context holds the lock already: one more
 * hold, the same token) or a wait for the lock (Acquisition, MultiAcquisition). Single-key and
 * multi-key calls share every step but the wait.
 */
export class LockRequests {
  private readonly locker: MultiKeyLocker;

  constructor(private readonly parts: LockingParts) {
    this.locker = parts.backend.multiKeys ?? new PerKeyLocker();
  }

  /** One key: re-enters when this context holds the lock, else waits for it. */
  async one(key: string, options: LockOptions | undefined, tryOnly: boolean): Promise<LockHandle | null> {
    assertLockKey(key);
    const call = this.shape(options, tryOnly);
    const names = this.parts.keys.names(key, call.kind.tag);
    const held = heldInScope(this.parts.engineId, names.lock);
    const context = this.parts.context;
    if (context.closing.aborted && !(held instanceof GrantHandle && held.grant.active)) {
      throw new LockServiceClosedError(context.held.grants.size === 0 ? 'closed' : 'shutting down', key);
    }
    // The grant, not this one handle: after a downgrade the frame's write handle is released while
    // the read hold on the same grant lives on, and asking again must re-enter, not self-deadlock.
    if (held instanceof GrantHandle) {
      if (held.grant.active) return (await this.reenter([held.grant], call, tryOnly))?.[0] ?? null;
      // Inside a critical section whose lock is lost, asking again must not quietly take a new lock:
      // the code around it still assumes the old one. A normally released grant is simply over.
      if (held.grant.lost) throw held.grant.lost;
    }
    if (context.queues.isFull(names.lock)) {
      // Busy, with no room to wait: fail fast instead of growing the queue without bound.
      if (tryOnly) return null;
      throw new LockNotAcquiredError(key, 0, -1, {
        reason: `${context.queues.maxWaitersPerKey} callers of this process already wait for it (maxWaitersPerKey)`,
      });
    }
    return new Acquisition(context, {
      key,
      names,
      kind: call.kind,
      kindLabel: call.kindLabel,
      options: call.options,
      waitMs: call.waitMs,
      leaseMs: call.leaseMs,
      watchdog: call.watchdog,
      tryOnly,
    }).run();
  }

  /** Several keys, all or none: re-enters when this context holds every one, else waits for all. */
  async many(
    keys: unknown,
    options: LockOptions | undefined,
    tryOnly: boolean,
  ): Promise<MultiLockHandle | null> {
    const ordered = multiLockKeys(keys);
    const call = this.shape(options, tryOnly);
    assertMultiKeyOptions(call.options);
    const targets: MultiLockTarget[] = ordered.map((key) => ({
      key,
      names: this.parts.keys.names(key, call.kind.tag),
    }));
    const grants = targets.map((t) => {
      const held = heldInScope(this.parts.engineId, t.names.lock);
      return held instanceof GrantHandle ? held.grant : undefined;
    });
    const lost = grants.find((g) => g?.lost);
    if (lost) throw lost.lost;
    const active = grants.filter((g): g is LockGrant => g?.active === true);
    if (active.length === targets.length) {
      const handles = await this.reenter(active, call, tryOnly);
      return handles && new MultiGrantHandle(handles);
    }
    if (active.length > 0) {
      throw new LockPartialReentryError(
        targets.filter((_, i) => grants[i]?.active).map((t) => t.key),
        targets.filter((_, i) => !grants[i]?.active).map((t) => t.key),
      );
    }
    const context = this.parts.context;
    if (context.closing.aborted) throw new LockServiceClosedError('shutting down', ordered[0]);
    return new MultiAcquisition(context, this.locker, { ...call, targets, tryOnly }).run();
  }

  /** The options of a call, validated, and what follows from them with the engine's defaults. */
  private shape(options: LockOptions | undefined, tryOnly: boolean): CallShape {
    const opts = callLockOptions(options);
    opts.signal?.throwIfAborted();
    const kind = this.parts.backend.kinds.kindFor(opts);
    const { defaults, watchdogLeaseMs } = this.parts.options;
    const fixedLease = opts.leaseMs ?? defaults.leaseMs;
    return {
      options: opts,
      kind,
      kindLabel: kindOf(opts).event,
      waitMs: opts.waitMs ?? (tryOnly ? 0 : defaults.waitMs),
      leaseMs: Math.min(fixedLease ?? watchdogLeaseMs, opts.maxHoldMs ?? Infinity),
      watchdog: fixedLease === undefined,
    };
  }

  /**
   * The one re-entry path: this async context holds every grant of `grants` (one key or all keys of
   * a multi-key call), so each gets one more hold in Redis with the grant's owner and token, and the
   * lease moves to at least the grant's lease from now. A grant Redis no longer has is lost (its
   * signal aborts) and the call fails with that loss; holds taken before it are given back.
   */
  private async reenter(
    grants: readonly LockGrant[],
    call: CallShape,
    tryOnly: boolean,
  ): Promise<GrantHandle[] | null> {
    const { kind, options } = call;
    const refused = grants.find((g) => !kind.reentrant || !g.kind.reentrant);
    if (refused) {
      if (tryOnly) return null;
      throw new LockNotAcquiredError(refused.key, 0, -1, {
        reason: 'this async context already holds it and it is not reentrant',
      });
    }
    const upgrade = grants.find((g) => g.options.mode === 'read' && options.mode === 'write');
    if (upgrade) throw new LockUpgradeError(upgrade.key);
    const started = monotonicMs();
    const handles: GrantHandle[] = [];
    try {
      for (const grant of grants) {
        const holdId = randomId();
        const sentAt = monotonicMs();
        const result = await kind.attempt({
          key: grant.key,
          names: grant.names,
          owner: grant.owner,
          holdId,
          leaseMs: grant.leaseMs,
          reenter: true,
          options,
        });
        if (result.status !== 'granted') {
          grant.lose('expired');
          throw grant.lost ?? new LockLostError(grant.key, 'expired');
        }
        grant.reentered(sentAt);
        handles.push(new GrantHandle(grant, holdId));
      }
    } catch (err) {
      await Promise.all(handles.map((h) => h.release()));
      throw err;
    }
    const events = this.parts.context.events;
    if (events.wants('acquired')) {
      for (const h of handles) {
        events.safeEmit('acquired', {
          key: h.key,
          kind: call.kindLabel,
          waitedMs: monotonicMs() - started,
          attempts: 1,
          reentered: true,
          fencingToken: h.fencingToken,
        });
      }
    }
    return handles;
  }
}

// ---- The wait for one key ----

/** How many locks' "recorded as waiting" marks an engine keeps (see AcquisitionContext.recordedWaits). */
const MAX_RECORDED_WAITS = 4096;

/** What an acquisition needs from its engine. */
export interface AcquisitionContext {
  readonly hub: WakeupChannels;
  readonly queues: LocalWaitQueues;
  readonly held: HeldLocks;
  readonly events: LockEvents;
  /** Aborted by close(): every waiter gives up. */
  readonly closing: AbortSignal;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** Fencing tokens a fresh grant of a cohort kind reserves (1: no cohorts). */
  readonly reserveTokens: number;
  /**
   * A fixed-lease attempt with local waiters behind it asks Redis for this much more than its
   * `leaseMs` (the cohort budget), so the lock can be handed over locally with each successor's whole
   * lease covered (0: no cohorts).
   */
  readonly cohortLeaseExtraMs: number;
  /**
   * Locks on which a busy attempt of this process may have recorded it as a waiter in Redis: only
   * a grant of one of these needs to remove that record (the uncontended grant skips it).
   */
  readonly recordedWaits: Set<string>;
  /** Turns a busy holder's remaining lease into an honest "retry after" (see HoldTimes). */
  retryAfter(key: string, remainingLeaseMs: number): number;
  isClosed(): boolean;
}

/** The parts of an engine that single-key and multi-key locking share. */
export interface LockingParts {
  readonly engineId: string;
  readonly keys: KeySpace;
  readonly backend: LockBackend;
  readonly context: AcquisitionContext;
  readonly options: ResolvedEngineOptions;
}

/** One call's parameters, validated and with defaults applied. */
export interface AcquisitionRequest {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly kind: LockKind;
  /** The kind's name in events (mutex, token, read, write, fair, semaphore). */
  readonly kindLabel: string;
  readonly options: LockOptions;
  readonly waitMs: number;
  readonly leaseMs: number;
  /** True when the watchdog renews the lease (no fixed `leaseMs`). */
  readonly watchdog: boolean;
  /** tryAcquire(): resolve null instead of throwing when the wait runs out. */
  readonly tryOnly: boolean;
}

/** The attempt request of one acquisition: one object, its per-attempt fields set before each attempt. */
type MutableAttempt = { -readonly [K in keyof AttemptRequest]: AttemptRequest[K] };

/**
 * One acquisition of one key: only the head of the process' local queue attempts (shared kinds let
 * every waiter try); a waiter sleeps on pub/sub wake-ups with exponential backoff as the safety net,
 * a cohort kind's waiter takes a lock a local holder hands over (both in its Waiter), and every Redis
 * command is bounded by what is left of `waitMs`. A granted attempt becomes a LockGrant, which opens
 * a cohort when it is a fresh grant of a cohort kind.
 */
export class Acquisition {
  private readonly ticket: Ticket;
  private readonly wait: Waiter;
  /** The request sent to the kind: built once, its lease, deadline and waiting mark set per attempt. */
  private readonly request: MutableAttempt;
  /** Cohort kinds with cohorts on: local waiters take hand-offs and wait for the local holder. */
  private readonly cohorts: boolean;
  /** Why the lock was busy when it is more than "held" (e.g. a RedLock split vote), for the error. */
  private busyReason?: string;
  private acquired = false;
  /** When the latest attempt was sent: a lease is counted from before the request that won it. */
  private requestedAt = 0;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
  ) {
    const started = monotonicMs();
    this.cohorts = req.kind.cohorts === true && ctx.reserveTokens > 1;
    const { key, names, options, leaseMs, kind } = req;
    // The engine id prefixes the owner id, so a script can tell this process' owners apart.
    const owner = `${ctx.held.engineId}.${randomId()}`;
    this.request = { key, names, owner, holdId: randomId(), leaseMs, reenter: false, options };
    if (this.cohorts) {
      this.request.reserveTokens = ctx.reserveTokens;
      this.request.process = ctx.held.engineId;
    }
    this.ticket = ctx.queues.enter(names.lock, kind.isExclusive?.(options) ?? kind.exclusive);
    this.wait = new Waiter(
      ctx,
      {
        options,
        waitMs: req.waitMs,
        tryOnly: req.tryOnly,
        kindLabel: req.kindLabel,
        directedWakeupSleepMs: kind.directedWakeupSleepMs,
        // A cohort kind's queue entry in Redis is the process (fair cohorts): wake-ups name it.
        owner: this.cohorts ? ctx.held.engineId : owner,
      },
      started,
      this.cohorts ? { req, ticket: this.ticket } : undefined,
    );
    if (this.cohorts) this.ticket.waiter = this.wait;
  }

  /** Waits for the lock: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<LockHandle | null> {
    const channel = this.req.names.channel;
    const wait = this.wait;
    try {
      let attemptNow = this.ticket.takeAttemptNow();
      while (!wait.aborted()) {
        if (wait.pending) return this.takeHanded();
        if (!this.ticket.isHead) {
          const turn = await wait.waitForTurn(this.ticket, channel);
          if (turn === 'aborted') break;
          if (turn === 'timeout') return this.timedOut();
          attemptNow = turn === 'attempt-now';
        }
        if (!attemptNow || wait.mustWaitLocally()) {
          const slept = (await wait.join(channel)) ? await wait.sleep() : 'timeout';
          if (wait.pending) return this.takeHanded();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
          if (wait.mustWaitLocally()) continue;
        }
        attemptNow = false;
        const result = await this.attempt();
        if (result.status === 'granted') {
          // Aborted (or closed) while the winning command was in flight: the abort wins, the
          // grant is given back at once instead of returning a lock the caller no longer wants.
          if (wait.aborted()) {
            await this.giveBack();
            break;
          }
          return await this.grant(result);
        }
        if (wait.pending) return this.takeHanded();
        this.busyReason = result.status === 'busy' ? result.reason : undefined;
        wait.noteBusy(this.req.key, result.status === 'busy' ? result.retryAfterMs : -1);
        if (wait.remaining() <= 0) return this.timedOut();
        if (!wait.joined()) {
          // Subscribe, then try once more at once: a release between our attempt and the
          // subscription would otherwise only be noticed by the backoff.
          if (!(await wait.join(channel))) return this.timedOut();
          attemptNow = true;
        }
      }
      return wait.abortedOut(this.req.key);
    } finally {
      this.cleanUp();
    }
  }

  /** Releases a grant nobody will hold (the call was aborted meanwhile); a failure is left to the lease. */
  private async giveBack(): Promise<void> {
    // Ignored: the lease ends a grant we could not give back.
    await this.req.kind.release(this.request).catch(() => undefined);
  }

  /** Takes the lock a local holder handed over. */
  private takeHanded(): LockHandle {
    const handle = this.wait.take();
    this.acquired = true;
    const waitedMs = monotonicMs() - this.wait.started;
    this.wait.reportGrant(this.req.key, waitedMs, handle.fencingToken, { handedOver: true });
    return handle;
  }

  private async attempt(): Promise<AttemptResult> {
    this.wait.attempts++;
    this.requestedAt = monotonicMs();
    const { ctx, request } = this;
    const lock = this.req.names.lock;
    const recordedWaits = ctx.recordedWaits;
    const recordedWaiting = recordedWaits.has(lock);
    // A fixed lease with local waiters: the Redis lease covers their hand-offs too (Cohort).
    const extra =
      this.cohorts && !this.req.watchdog && ctx.queues.waitersOf(lock) > 1 ? ctx.cohortLeaseExtraMs : 0;
    request.leaseMs = this.req.leaseMs + extra;
    request.timeoutMs = Math.max(1, this.wait.remaining()) + ATTEMPT_MARGIN_MS;
    request.recordedWaiting = recordedWaiting;
    try {
      const result = await this.req.kind.attempt(request);
      if (result.status === 'granted') {
        if (recordedWaiting) recordedWaits.delete(lock);
      } else if (!recordedWaiting) {
        // Bounded: a forgotten record only costs a needless wake-up until its zset expires.
        if (recordedWaits.size >= MAX_RECORDED_WAITS) recordedWaits.clear();
        recordedWaits.add(lock);
      }
      return result;
    } catch (err) {
      recordedWaits.add(lock);
      this.wait.reportFailure(this.req.key, 'error');
      throw err;
    }
  }

  /** The grant a granted attempt stands for; a fresh cohort grant opens a cohort. */
  private async grant(result: Extract<AttemptResult, { status: 'granted' }>): Promise<LockHandle> {
    this.acquired = true;
    const { key, names, kind, options, leaseMs, watchdog } = this.req;
    const { requestedAt, request, ctx } = this;
    const token = result.fencingToken;
    const grant = new LockGrant(ctx.held, {
      kind,
      key,
      names,
      owner: request.owner,
      fencingToken: token,
      options,
      leaseMs,
      watchdog,
      requestedAt,
      replicaAcks: result.replicaAcks,
      // A fresh grant of a cohort kind reserved tokens for local hand-offs: it opens a cohort.
      cohort:
        this.cohorts && !result.reentered
          ? { holdId: request.holdId, reservedTokens: ctx.reserveTokens, redisLeaseMs: request.leaseMs }
          : undefined,
    });
    const handle = new GrantHandle(grant, request.holdId);
    ctx.held.add(grant);
    if (ctx.isClosed()) {
      await handle.release();
      throw new LockServiceClosedError('closed', key);
    }
    const acks = result.replicaAcks !== undefined ? { replicaAcks: result.replicaAcks } : undefined;
    this.wait.reportGrant(key, requestedAt - this.wait.started, token, acks);
    return handle;
  }

  private timedOut(): LockHandle | null {
    if (this.wait.pending) return this.takeHanded();
    // Waited behind a holder of this process without asking Redis: its lease is known here.
    if (this.wait.retryAfterMs < 0)
      this.wait.retryAfterMs = this.ctx.held.remainingLeaseOf(this.req.names.lock);
    return this.wait.timedOut(
      this.req.key,
      (waited) => this.busyReason && `${this.busyReason}; gave up after ${Math.round(waited)} ms`,
    );
  }

  private cleanUp(): void {
    this.wait.settle();
    this.ticket.leave(this.acquired);
    this.wait.leave();
    // Kinds that queue waiters in Redis drop this one's entry now instead of at its deadline.
    const { kind, names } = this.req;
    if (this.acquired || !kind.abandon) return;
    if (!this.cohorts) {
      if (this.wait.attempts > 0) void kind.abandon(this.request);
      return;
    }
    // Cohorts (the fair lock's entry is the process): the last local waiter takes the entry out,
    // whichever of them queued it; otherwise it stays for the next local waiter, who refreshes it.
    if (this.ctx.queues.waitersOf(names.lock) > 0 || !this.ctx.recordedWaits.delete(names.lock)) return;
    void kind.abandon(this.request);
  }
}
