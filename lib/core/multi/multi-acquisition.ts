import { LockError, LockNotAcquiredError } from '../errors';
import { ATTEMPT_MARGIN_MS, type AcquisitionContext } from '../engine/acquisition';
import { kindName } from '../engine/held-locks';
import { monotonicMs, randomId } from '../engine/ids';
import { LockGrant } from '../engine/lock-grant';
import { GrantHandle } from '../engine/lock-handle';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { linkSignals } from '../waiting/abort';
import type { Wakeups } from '../waiting/wakeup-hub';
import { withDeadline } from '../waiting/with-deadline';
import type { MultiKeyLocker, MultiLockTarget } from './multi-key-locker';
import { MultiGrantHandle } from './multi-lock-handle';

/** One multi-key call's parameters, validated, keys de-duplicated and in the global order. */
export interface MultiAcquisitionRequest {
  readonly targets: readonly MultiLockTarget[];
  readonly kind: LockKind;
  readonly options: LockOptions;
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly watchdog: boolean;
  readonly tryOnly: boolean;
}

type Round =
  | { status: 'granted'; tokens: number[]; requestedAt: number }
  | { status: 'busy'; target: MultiLockTarget; retryAfterMs: number };

/**
 * The wait of a multi-key call. Each round takes the groups (keys one call can take atomically)
 * in the global key order; when a group is busy, the groups already taken are given back at once
 * and the caller sleeps on the busy key's wake-ups (pub/sub, with the backoff as safety net) before
 * the next round. Nobody ever waits while holding part of a set, so no order of keys can deadlock.
 */
export class MultiAcquisition {
  private readonly owner = randomId();
  private readonly holdId = randomId();
  private readonly started = monotonicMs();
  private readonly deadline: number;
  private readonly kindLabel: string;
  private link?: { signal: AbortSignal; unlink: () => void };
  private wake?: { channel: string; wakeups: Wakeups };
  private attempts = 0;
  private retryAfterMs = -1;
  private busyKey?: string;
  private backoffMs: number;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly locker: MultiKeyLocker,
    private readonly req: MultiAcquisitionRequest,
  ) {
    this.deadline = this.started + req.waitMs;
    this.kindLabel = kindName(req.kind, req.options);
    this.backoffMs = ctx.backoff.initialMs;
  }

  /** Waits for every key: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<MultiGrantHandle | null> {
    const groups = this.locker.groups(this.req.targets);
    try {
      let attemptNow = true;
      while (!this.aborted()) {
        if (!attemptNow) {
          const slept = await this.sleep();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
        }
        attemptNow = false;
        const round = await this.round(groups);
        if (round.status === 'granted') {
          if (this.aborted()) {
            await this.giveBack(this.req.targets);
            break;
          }
          return await this.grant(round);
        }
        this.noteBusy(round);
        if (this.remaining() <= 0) return this.timedOut();
        if (this.wake?.channel !== round.target.names.channel) {
          // Subscribe, then try again at once: a release before the subscription would be missed.
          if (!(await this.join(round.target.names.channel))) return this.timedOut();
          attemptNow = true;
        }
      }
      return this.abortedOut();
    } finally {
      this.link?.unlink();
      this.wake?.wakeups.leave();
    }
  }

  /** One all-or-none round over every group, in order; gives back what it took unless all were granted. */
  private async round(groups: MultiLockTarget[][]): Promise<Round> {
    this.attempts++;
    const requestedAt = monotonicMs();
    const tokens: number[] = [];
    const taken: MultiLockTarget[] = [];
    try {
      for (const group of groups) {
        const result = await this.locker.attempt({
          targets: group,
          kind: this.req.kind,
          owner: this.owner,
          holdId: this.holdId,
          leaseMs: this.req.leaseMs,
          options: this.req.options,
          timeoutMs: Math.max(1, this.remaining()) + ATTEMPT_MARGIN_MS,
        });
        if (result.status === 'busy') {
          await this.giveBack(taken);
          return {
            status: 'busy',
            target: group[result.index] ?? group[0]!,
            retryAfterMs: result.retryAfterMs,
          };
        }
        tokens.push(...result.fencingTokens);
        taken.push(...group);
      }
    } catch (err) {
      await this.giveBack(taken);
      this.fail('error');
      throw err;
    }
    return { status: 'granted', tokens, requestedAt };
  }

  /**
   * Releases keys taken in a round that cannot complete. A release that fails (Redis down) is left
   * to the lease: the keys free themselves when it ends.
   */
  private async giveBack(targets: readonly MultiLockTarget[]): Promise<void> {
    const { kind, options } = this.req;
    await Promise.all(
      targets.map((t) =>
        kind
          .release({ key: t.key, names: t.names, owner: this.owner, holdId: this.holdId, options })
          .catch(() => undefined),
      ),
    );
  }

  private remaining(): number {
    return this.deadline - monotonicMs();
  }

  private aborted(): boolean {
    return this.req.options.signal?.aborted === true || this.ctx.closing.aborted;
  }

  private async join(channel: string): Promise<boolean> {
    this.wake?.wakeups.leave();
    this.wake = undefined;
    const joining = this.ctx.hub.join(channel);
    const wakeups = await withDeadline(joining, Math.max(1, this.remaining()));
    if (!wakeups) {
      joining.then(
        (w) => w.leave(),
        () => undefined,
      );
      return false;
    }
    this.wake = { channel, wakeups };
    return true;
  }

  private async sleep(): Promise<'woken' | 'timeout' | 'aborted'> {
    if (this.remaining() <= 0) return 'timeout';
    const holderLeft = this.retryAfterMs >= 0 ? this.retryAfterMs + 1 : Infinity;
    const ms = Math.max(1, Math.min(this.backoffMs, holderLeft, this.remaining()));
    this.link ??= linkSignals(this.req.options.signal, this.ctx.closing);
    await this.wake!.wakeups.wait(ms, this.link.signal);
    this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.backoff.maxMs);
    return this.aborted() ? 'aborted' : 'woken';
  }

  private noteBusy(round: Extract<Round, { status: 'busy' }>): void {
    this.retryAfterMs = round.retryAfterMs;
    this.busyKey = round.target.key;
    this.ctx.events.safeEmit('contended', {
      key: round.target.key,
      kind: this.kindLabel,
      retryAfterMs: round.retryAfterMs,
    });
  }

  private async grant(round: Extract<Round, { status: 'granted' }>): Promise<MultiGrantHandle> {
    const { targets, kind, options, leaseMs, watchdog } = this.req;
    const handles = targets.map((t, i) => {
      const grant = new LockGrant(
        this.ctx.held,
        kind,
        t.key,
        t.names,
        this.owner,
        round.tokens[i]!,
        options,
        {
          leaseMs,
          watchdog,
          requestedAt: round.requestedAt,
        },
      );
      this.ctx.held.add(grant);
      return new GrantHandle(grant, this.holdId);
    });
    const handle = new MultiGrantHandle(handles);
    if (this.ctx.isClosed()) {
      await handle.release();
      throw new LockError('The lock service is closed', targets[0]!.key);
    }
    for (const h of handles) {
      this.ctx.events.safeEmit('acquired', {
        key: h.key,
        kind: this.kindLabel,
        waitedMs: round.requestedAt - this.started,
        attempts: this.attempts,
        reentered: false,
        fencingToken: h.fencingToken,
      });
    }
    return handle;
  }

  private fail(reason: 'timeout' | 'aborted' | 'closed' | 'error'): void {
    this.ctx.events.safeEmit('notAcquired', {
      key: this.busyKey ?? this.req.targets[0]!.key,
      kind: this.kindLabel,
      waitedMs: monotonicMs() - this.started,
      attempts: this.attempts,
      reason,
      tryOnly: this.req.tryOnly,
    });
  }

  private timedOut(): null {
    this.fail('timeout');
    if (this.req.tryOnly) return null;
    const waited = monotonicMs() - this.started;
    const key = this.busyKey ?? this.req.targets[0]!.key;
    const reason =
      `held by another owner; it is one of ${this.req.targets.length} keys asked for together ` +
      `(all or none), still busy after waiting ${Math.round(waited)} ms`;
    const expected = this.ctx.retryAfter(key, this.retryAfterMs);
    throw new LockNotAcquiredError(key, waited, this.retryAfterMs, reason, expected);
  }

  private abortedOut(): never {
    const signal = this.req.options.signal;
    const key = this.busyKey ?? this.req.targets[0]!.key;
    if (this.ctx.closing.aborted && !signal?.aborted) {
      this.fail('closed');
      throw new LockNotAcquiredError(
        key,
        monotonicMs() - this.started,
        this.retryAfterMs,
        'the lock service is shutting down',
      );
    }
    this.fail('aborted');
    throw signal!.reason;
  }
}
