import type { AcquisitionContext } from '../waiting/acquisition-context';
import { GrantHandle } from '../grant/grant-handle';
import { LockGrant } from '../grant/lock-grant';
import { LockServiceClosedError } from '../errors';
import { type LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { Waiter } from '../waiting/waiter';
import { ATTEMPT_MARGIN_MS } from '../runtime/with-deadline';
import type { MultiKeyLocker, MultiLockTarget } from './multi-key-locker';
import { MultiGrantHandle } from './multi-lock-handle';

/** One multi-key call's parameters, validated, keys de-duplicated and in the global order. */
export interface MultiAcquisitionRequest {
  readonly targets: readonly MultiLockTarget[];
  readonly kind: LockKind;
  /** The kind's name in events (mutex or token). */
  readonly kindLabel: string;
  readonly options: LockOptions;
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly watchdog: boolean;
  readonly tryOnly: boolean;
}

/**
 * How one round ended: every key taken, the first busy one, or (after the lock was seen busy) a
 * command the wait's own end left unanswered (see round()).
 */
type Round =
  | { status: 'granted'; tokens: number[]; requestedAt: number }
  | { status: 'busy'; target: MultiLockTarget; retryAfterMs: number }
  | { status: 'unanswered'; target: MultiLockTarget; reason: string };

/**
 * The wait of a multi-key call. Each round takes the groups (keys one call can take atomically)
 * in the global key order; when a group is busy, the groups already taken are given back at once
 * and the caller sleeps on the busy key's wake-ups before the next round — the same wait, backoff
 * and outcome reporting as a single-key acquisition (AcquisitionWait). Nobody ever waits while
 * holding part of a set, so no order of keys can deadlock.
 */
export class MultiAcquisition {
  private ids: { readonly owner: string; readonly holdId: string };
  private readonly wait: Waiter;
  private readonly kindLabel: string;
  private busyKey?: string;
  /** Why the last round did not complete when it is not a busy key (a grant read too late), for the error. */
  private busyReason?: string;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly locker: MultiKeyLocker,
    private readonly req: MultiAcquisitionRequest,
  ) {
    this.kindLabel = req.kindLabel;
    this.ids = { owner: ownerId(ctx), holdId: ctx.runtime.randomId() };
    this.wait = new Waiter(
      ctx,
      {
        options: req.options,
        waitMs: req.waitMs,
        tryOnly: req.tryOnly,
        kindLabel: this.kindLabel,
        owner: this.ids.owner,
      },
      ctx.runtime.now(),
    );
  }

  /** Waits for every key: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<MultiGrantHandle | null> {
    const groups = this.locker.groups(this.req.targets);
    try {
      let attemptNow = true;
      while (!this.wait.aborted()) {
        if (!attemptNow) {
          const slept = await this.wait.sleep();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
        }
        attemptNow = false;
        const round = await this.round(groups);
        if (round.status === 'unanswered') {
          this.busyKey = round.target.key;
          this.busyReason = round.reason;
          return this.timedOut();
        }
        if (round.status === 'granted') {
          if (this.wait.aborted()) {
            // Not waited for, as a single-key acquisition's (Acquisition.run): the caller has left.
            void this.giveBack(this.req.targets);
            break;
          }
          // Keys already lost when the round's answer came (read after their leases, counted from its
          // first request, ran out here, or one named by a force release first: HeldLocks.lostOnArrival).
          // As a single-key acquisition does: give every key back and go on as if busy (giveBack never
          // rejects, a failed release being left to the lease). With no wait left the give-back is not
          // waited for (waitMs bounds the call); a retry waits for it (one round trip), so that it never
          // meets its own grant.
          const lost = this.ctx.held.lostOnArrival(
            round.requestedAt,
            this.req.leaseMs,
            this.ids.owner,
            this.req.targets,
          );
          if (lost !== undefined) {
            this.busyKey = undefined;
            this.busyReason = lost;
            this.wait.noteBusy(this.outcomeKey(), -1);
            if (this.wait.remaining() <= 0) {
              void this.giveBack(this.req.targets);
              return this.timedOut();
            }
            await this.giveBack(this.req.targets);
            if (this.wait.remaining() <= 0) return this.timedOut();
            attemptNow = true;
            continue;
          }
          return await this.grant(round);
        }
        this.busyKey = round.target.key;
        this.busyReason = undefined;
        this.wait.noteBusy(round.target.key, round.retryAfterMs);
        if (this.wait.remaining() <= 0) return this.timedOut();
        const channel = round.target.names.channel;
        if (!this.wait.joined(channel)) {
          // Subscribe, then try again at once: a release before the subscription would be missed.
          if (!(await this.wait.join(channel))) return this.timedOut();
          attemptNow = true;
        }
      }
      return this.wait.abortedOut(this.outcomeKey());
    } finally {
      this.wait.leave();
    }
  }

  /**
   * One all-or-none round over every group, in order; gives back what it took unless all were
   * granted. Each command is bounded by what is left of the wait plus ATTEMPT_MARGIN_MS. When that
   * bound ends a command after the wait ran out and a key was seen busy (Waiter.unansweredAtEnd),
   * the round is 'unanswered': the call reports busy, as a single-key acquisition does.
   */
  private async round(groups: MultiLockTarget[][]): Promise<Round> {
    if (++this.wait.attempts > 1) {
      // A new round asks for holds of its own: undoing a late grant of an earlier round must not take
      // this round's (see Acquisition.attempt).
      const { runtime } = this.ctx;
      const owner = this.req.kind.reentrant ? this.ids.owner : ownerId(this.ctx);
      this.ids = { owner, holdId: runtime.randomId() };
    }
    const requestedAt = this.ctx.runtime.now();
    const tokens: number[] = [];
    const taken: MultiLockTarget[] = [];
    const { kind, leaseMs, options } = this.req;
    let group: MultiLockTarget[] = groups[0]!;
    let timeoutMs = 0;
    try {
      for (group of groups) {
        timeoutMs = Math.max(1, this.wait.remaining()) + ATTEMPT_MARGIN_MS;
        const result = await this.locker.attempt({
          targets: group,
          kind,
          owner: this.ids.owner,
          holdId: this.ids.holdId,
          leaseMs,
          options,
          timeoutMs,
        });
        if (result.status === 'busy') {
          await this.giveBack(taken);
          const target = group[result.index] ?? group[0]!;
          return { status: 'busy', target, retryAfterMs: result.retryAfterMs };
        }
        tokens.push(...result.fencingTokens);
        taken.push(...group);
      }
    } catch (err) {
      const unanswered = this.wait.unansweredAtEnd(err, timeoutMs);
      if (unanswered !== undefined) {
        // No wait left: the give-back is not waited for (waitMs bounds the call).
        void this.giveBack(taken);
        return { status: 'unanswered', target: group[0]!, reason: unanswered };
      }
      await this.giveBack(taken);
      this.wait.reportFailure(this.outcomeKey(), 'error');
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
    const { owner, holdId } = this.ids;
    await Promise.all(
      targets.map((t) =>
        kind.release({ key: t.key, names: t.names, owner, holdId, options }).catch(() => undefined),
      ),
    );
  }

  /** The grants of a granted round, one per key, each held by the engine. */
  private async grant(round: Extract<Round, { status: 'granted' }>): Promise<MultiGrantHandle> {
    const { targets, kind, options, leaseMs, watchdog } = this.req;
    const { ctx, ids } = this;
    // The caller's context, kept once for every key: a loss of any of them is told there.
    const holder = ctx.runtime.keepContext();
    const handles = targets.map((t, i) => {
      const grant = new LockGrant(ctx.held, {
        kind,
        key: t.key,
        names: t.names,
        owner: ids.owner,
        fencingToken: round.tokens[i]!,
        options,
        leaseMs,
        watchdog,
        requestedAt: round.requestedAt,
      });
      grant.heldBy(holder);
      ctx.held.add(grant);
      return new GrantHandle(grant, ids.holdId);
    });
    const handle = new MultiGrantHandle(handles);
    if (ctx.isClosed()) {
      await handle.release();
      throw new LockServiceClosedError('closed', targets[0]!.key);
    }
    const waitedMs = round.requestedAt - this.wait.started;
    for (const h of handles) this.wait.reportGrant(h.key, waitedMs, h.fencingToken);
    return handle;
  }

  /** The key an outcome names: the busy one, else the first. */
  private outcomeKey(): string {
    return this.busyKey ?? this.req.targets[0]!.key;
  }

  private timedOut(): null {
    const count = this.req.targets.length;
    return this.wait.timedOut(this.outcomeKey(), (waited: number) =>
      this.busyReason
        ? `${this.busyReason}; gave up after ${Math.round(waited)} ms`
        : `held by another owner; it is one of ${count} keys asked for together ` +
          `(all or none), still busy after waiting ${Math.round(waited)} ms`,
    );
  }
}

/**
 * A new owner id, prefixed with the engine id as a single-key acquisition's is: a force release's
 * notice goes to the channel of the engine the owner names, and scripts tell this process' owners apart.
 */
function ownerId(ctx: AcquisitionContext): string {
  return `${ctx.held.engineId}.${ctx.runtime.randomId()}`;
}
