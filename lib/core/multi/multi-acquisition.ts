import { LockServiceClosedError } from '../errors';
import type { AcquisitionContext } from '../engine/acquisition-context';
import {
  abortedOut,
  emitAcquired,
  emitNotAcquired,
  timedOut,
  type WaitSummary,
} from '../engine/acquisition-outcome';
import { kindName } from '../engine/held-locks';
import { monotonicMs, randomId } from '../engine/ids';
import type { AcquisitionIds } from '../engine/acquisition-grant';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { linkSignals } from '../waiting/abort';
import type { Wakeups } from '../waiting/wakeup-hub';
import { withDeadline } from '../waiting/with-deadline';
import type { MultiKeyLocker, MultiLockTarget } from './multi-key-locker';
import { MultiGrantHandle } from './multi-lock-handle';
import { attemptRound, giveBack, grantRound, type Round } from './multi-round';

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

/**
 * The wait of a multi-key call. Each round takes the groups (keys one call can take atomically)
 * in the global key order; when a group is busy, the groups already taken are given back at once
 * and the caller sleeps on the busy key's wake-ups (pub/sub, with the backoff as safety net) before
 * the next round. Nobody ever waits while holding part of a set, so no order of keys can deadlock.
 */
export class MultiAcquisition {
  private readonly ids: AcquisitionIds = { owner: randomId(), holdId: randomId() };
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
            await giveBack(this.req, this.ids, this.req.targets);
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

  /** One all-or-none round over every group, in order (multi-round.ts). */
  private async round(groups: MultiLockTarget[][]): Promise<Round> {
    this.attempts++;
    try {
      return await attemptRound(this.locker, this.req, this.ids, groups, () => this.remaining());
    } catch (err) {
      emitNotAcquired(this.ctx.events, this.summary(), 'error');
      throw err;
    }
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
    const { targets } = this.req;
    const handles = grantRound(this.ctx, this.req, this.ids, round);
    const handle = new MultiGrantHandle(handles);
    if (this.ctx.isClosed()) {
      await handle.release();
      throw new LockServiceClosedError('closed', targets[0]!.key);
    }
    const summary = this.summary();
    for (const h of handles) {
      emitAcquired(this.ctx.events, summary, h.key, round.requestedAt - this.started, h.fencingToken);
    }
    return handle;
  }

  /** This wait so far, for its outcome: it names the busy key, else the first. */
  private summary(): WaitSummary {
    return {
      key: this.busyKey ?? this.req.targets[0]!.key,
      kindLabel: this.kindLabel,
      started: this.started,
      attempts: this.attempts,
      tryOnly: this.req.tryOnly,
      retryAfterMs: this.retryAfterMs,
    };
  }

  private timedOut(): null {
    const count = this.req.targets.length;
    return timedOut(
      this.ctx,
      this.summary(),
      (waited) =>
        `held by another owner; it is one of ${count} keys asked for together ` +
        `(all or none), still busy after waiting ${Math.round(waited)} ms`,
    );
  }

  private abortedOut(): never {
    return abortedOut(this.ctx, this.req.options.signal, this.summary());
  }
}
