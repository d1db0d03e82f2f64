import { LockRedisError } from '../errors';
import { withDeadline } from '../runtime/with-deadline';
import type { InspectionTarget } from './inspection-target';
import { refusalOf } from './refusal';
import type { Runtime, RuntimeTimer } from '../runtime/runtime';

/** After a failed subscription, the next attempt waits this long (doubling up to the cap). */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/** What the notice subscription of one engine needs. */
export interface NoticeSubscriptionDeps {
  readonly runtime: Runtime;
  readonly target: InspectionTarget;
  /** This engine's notice channel. */
  readonly channel: string;
  readonly commandTimeoutMs: number;
  /** A force-release notice for this engine arrived. */
  readonly onNotice: (message: string) => void;
  /** Redis refused (`reason`) or accepts again (`undefined`) the subscription; once per change. */
  readonly onRefusal: (reason: string | undefined) => void;
}

/**
 * The engine's one force-release notice channel, subscribed once the engine's first lock call has
 * answered and kept until it closes: a holder hears a force release of its grant whatever the grant's age (force-release.lua
 * PUBLISHes to the channel of the engine named in the owner id). Nothing on the lock path waits for
 * it. A subscription that fails is asked for again (250 ms, doubling to 5 s); a refusal (ACL) is
 * reported once per change, and the client restores the subscription after a reconnect.
 */
export class NoticeSubscription {
  private closed = false;
  private retryMs = RETRY_FIRST_MS;
  private retry?: RuntimeTimer;
  private refused?: string;
  /** Aborted by close(): a subscription still waiting for its confirmation stops waiting. */
  private readonly closing = new AbortController();

  constructor(private readonly deps: NoticeSubscriptionDeps) {
    void this.subscribe();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    this.retry?.cancel();
    this.deps.target.unlisten(this.deps.channel);
  }

  private async subscribe(): Promise<void> {
    const { target, channel, onNotice, commandTimeoutMs } = this.deps;
    const onRefused = (err: unknown): void => this.report(refusalOf(err));
    try {
      // Bounded like a command: a client that queues commands while Redis is away (node-redis'
      // offline queue) might never settle the SUBSCRIBE.
      await withDeadline(this.deps.runtime, target.listen(channel, onNotice, onRefused), commandTimeoutMs, {
        onTimeout: () =>
          new LockRedisError(
            `Redis did not confirm the force-release notice subscription within ${commandTimeoutMs} ms`,
          ),
        signal: this.closing.signal,
      });
    } catch (err) {
      if (this.closed) return;
      this.report(refusalOf(err));
      // Dropped so the next attempt subscribes anew; a lost connection or a timeout is reported by
      // the connection events, a refusal above.
      target.unlisten(channel);
      this.retry = this.deps.runtime.setTimer(() => void this.subscribe(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      return;
    }
    if (this.closed) return;
    this.retryMs = RETRY_FIRST_MS;
    this.report(undefined);
  }

  /** Reports a refusal, or that it passed, once per change; a failure without a refusal changes nothing. */
  private report(refusal: string | undefined): void {
    if (this.refused === refusal) return;
    this.refused = refusal;
    this.deps.onRefusal(refusal);
  }
}
