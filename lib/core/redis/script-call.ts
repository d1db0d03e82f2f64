import { deadlines, type Deadline } from '../engine/deadlines';
import { LockRedisError } from '../errors';
import { quoteKey } from '../options/validation';
import { isFailoverError } from '../topology/failover-retry';
import { isNoScript, type RedisGateway, type ScriptCall } from './redis-gateway';
import type { LuaScript, ScriptArg } from './script-library';

/** Pause between retries of a script during a failover (ioredis' own retryDelayOnFailover). */
const FAILOVER_RETRY_MS = 100;

/**
 * One script call, from the gates to its answer: its deadline on the process' one timer, EVAL once
 * after NOSCRIPT, retries during a Cluster or Sentinel failover until the deadline (every script of
 * the library is safe to run twice: grants are keyed by owner and hold id, releases and renewals are
 * owner-checked and per hold), and a late reply handed to `onLateReply`. One object per call, so the
 * uncontended path allocates little.
 */
export class PendingScript<Reply> implements Deadline {
  at: number;
  slot = -1;
  private timedOut = false;
  private reloaded = false;
  readonly readOnly: boolean;
  readonly script: LuaScript;
  readonly keys: readonly string[];
  readonly args: readonly ScriptArg[];
  private readonly call: ScriptCall<Reply> | undefined;
  private readonly limit: number;

  constructor(
    private readonly gateway: RedisGateway,
    sent: {
      readonly script: LuaScript;
      readonly keys: readonly string[];
      readonly args: readonly ScriptArg[];
      readonly call?: ScriptCall<Reply>;
      /** The call settles within this many ms. */
      readonly limit: number;
    },
    private readonly resolve: (reply: Reply) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    ({ script: this.script, keys: this.keys, args: this.args, call: this.call, limit: this.limit } = sent);
    this.at = performance.now() + sent.limit;
    this.readOnly = sent.call?.readOnly === true;
  }

  start(): void {
    deadlines.schedule(this);
    this.send();
  }

  /** Runs after the deadline: the caller hears a timeout now, a late reply goes to onLateReply. */
  expire(): void {
    this.timedOut = true;
    const userKey = this.call?.userKey;
    this.reject(
      new LockRedisError(
        `Redis did not answer ${this.script.name} within ${this.limit} ms` +
          (userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`),
        userKey,
      ),
    );
  }

  private send(): void {
    if (this.gateway.gated && this.call?.ungated !== true) {
      this.gateway.passGates().then(
        () => this.dispatch(),
        (err: unknown) => this.failed(err),
      );
    } else {
      this.dispatch();
    }
  }

  // A call that timed out still completes what it sent (the EVAL after a NOSCRIPT included): a grant
  // that lands late is then undone through onLateReply, as it would be without the reload.
  private dispatch(): void {
    this.gateway.dispatch(this as PendingScript<unknown>, this.reloaded).then(
      (reply) => this.replied(reply as Reply),
      (err: unknown) => this.errored(err),
    );
  }

  private replied(reply: Reply): void {
    this.gateway.answered();
    if (this.slot < 0) {
      if (this.timedOut) this.call?.onLateReply?.(reply);
      return;
    }
    deadlines.remove(this);
    this.resolve(reply);
  }

  private errored(err: unknown): void {
    this.gateway.answered();
    if (!this.reloaded && isNoScript(err)) {
      // EVAL both runs and caches the script, so the next EVALSHA hits again.
      this.reloaded = true;
      this.dispatch();
    } else if (this.gateway.ridesOutFailover && isFailoverError(err) && !this.timedOut) {
      // Retried only while the caller still waits for it.
      setTimeout(() => {
        if (!this.timedOut) this.send();
      }, FAILOVER_RETRY_MS).unref();
    } else {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    if (this.slot < 0) return; // timed out already: the caller heard that
    deadlines.remove(this);
    this.reject(this.gateway.failure(err, this.script.name, this.call?.userKey));
  }
}
