import { printable, quoteKey } from '../options/validation';
import { LockPermissionError, LockRedisError } from '../errors';
import { retryDuringFailover, ridesOutFailover } from '../topology/failover-retry';
import { RedisClient } from './redis-client';
import { fatalConnectionError } from './redis-connection';
import { LuaScript, ScriptArg } from './script-library';
import { CommandDeadlines } from './command-deadlines';

/**
 * Runs the library's Lua scripts on one Redis (or Cluster): EVALSHA first, EVAL once on NOSCRIPT
 * (after SCRIPT FLUSH or a failover), every call bounded by `commandTimeoutMs`, every failure a
 * LockRedisError that names the key and keeps the Redis error as `cause`.
 */
export class RedisGateway {
  /** Wake-ups go out with SPUBLISH on a Redis 7 Cluster (sharded pub/sub), PUBLISH otherwise. */
  publishCommand: 'PUBLISH' | 'SPUBLISH' = 'PUBLISH';

  /** Work that must finish before the next script runs; kept until it reports success. */
  private preflight?: () => Promise<boolean>;
  private preflightRun?: Promise<void>;
  /** Checked once before the first script (the ACL check); a LockPermissionError sticks. */
  private permissionCheck?: () => Promise<void>;
  private permissionsChecked?: Promise<void>;
  /** Cluster and Sentinel: failover errors are retried until the command's deadline. */
  private readonly ridesOutFailover: boolean;
  /** Every script call's deadline, on one timer (not one per call). */
  private readonly deadlines = new CommandDeadlines();

  /** Script calls sent and not yet answered (see `batchWhenBusy`). */
  private inFlight = 0;

  constructor(
    readonly client: RedisClient,
    private readonly commandTimeoutMs: number,
    /**
     * Only for a connection the engine opened itself: a script call sent while others are still
     * in flight goes out with ioredis auto-pipelining (batched with the calls of the same tick: one
     * write, one read for many callers, which is what Redis spends its CPU on); a call on an idle
     * connection goes out at once, so a lone caller pays no extra tick. A client the user passed
     * in is never changed.
     */
    private readonly batchWhenBusy = false,
  ) {
    this.ridesOutFailover = ridesOutFailover(client);
  }

  /**
   * Runs `task` before the next script (e.g. choosing the publish command once the server version
   * is known). A task that resolves false or rejects is tried again before the following script;
   * the script itself runs either way.
   */
  beforeNextScript(task: () => Promise<boolean>): void {
    this.preflight = task;
  }

  /**
   * Runs `check` before the first script: until it resolves no script runs. A LockPermissionError
   * fails every later script the same way (the user lacks what the scripts need, so running them
   * could leave half-written keys); any other failure is retried before the next script.
   */
  checkBeforeFirstScript(check: () => Promise<void>): void {
    this.permissionCheck = check;
    // A client that is connected already (passed in by the user) is checked at once, when the
    // engine starts; one we open lazily is checked at its first use.
    if (this.client.status === 'ready') this.runPermissionCheck().catch(() => undefined);
  }

  /**
   * Runs `script`, settling within `commandTimeoutMs` or `timeoutMs` when that is shorter (a caller
   * whose wait ends sooner must not be held by a hanging Redis). A reply that arrives after the
   * timeout goes to `onLateReply` instead of being lost (e.g. to undo a late grant).
   */
  async run<Args extends readonly ScriptArg[], Reply>(
    script: LuaScript<Args, Reply>,
    keys: string[],
    args: Args,
    { userKey, onLateReply, timeoutMs = this.commandTimeoutMs }: ScriptCall<Reply> = {},
  ): Promise<Reply> {
    let timedOut = false;
    const call = (
      this.ridesOutFailover
        ? retryDuringFailover(
            () => this.evalWithReload(script, keys, args),
            () => timedOut,
          )
        : this.evalWithReload(script, keys, args)
    ) as Promise<Reply>;
    if (onLateReply) {
      call.then(
        (reply) => {
          if (timedOut) onLateReply(reply);
        },
        () => undefined, // the error is reported through the deadline race, or was already a timeout
      );
    }
    const limit = Math.max(1, Math.min(timeoutMs, this.commandTimeoutMs));
    try {
      return await this.deadlines.race(call, limit, () => {
        timedOut = true;
        return new LockRedisError(
          `Redis did not answer ${script.name} within ${limit} ms` +
            (userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`),
          userKey,
        );
      });
    } catch (err) {
      // A connection that gave up for good (credentials, certificate) says why, not "closed".
      const fatal = fatalConnectionError(this.client);
      throw toLockRedisError(
        fatal ? withKey(fatal, userKey) : (permissionError(err) ?? err),
        script.name,
        userKey,
      );
    }
  }

  private async evalWithReload(
    script: LuaScript<readonly ScriptArg[], unknown>,
    keys: string[],
    args: readonly ScriptArg[],
  ): Promise<unknown> {
    if (this.preflight) await this.runPreflight();
    if (this.permissionCheck) await this.runPermissionCheck();
    if (this.batchWhenBusy) {
      // An ioredis pipeline answers all of its calls at once, when the last one is answered: beyond
      // MAX_BATCHED calls in flight (a burst of thousands), calls go out one by one again.
      // Renewal batches (hundreds of locks per call) never join: the calls batched with one would wait for it.
      (this.client.options as { enableAutoPipelining?: boolean }).enableAutoPipelining =
        this.inFlight > 0 && this.inFlight < MAX_BATCHED && !UNBATCHED_SCRIPTS.has(script.name);
    }
    this.inFlight++;
    try {
      return await this.client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      // EVAL both runs and caches the script, so the next EVALSHA hits again.
      return await this.client.eval(script.source, keys.length, ...keys, ...args);
    } finally {
      this.inFlight--;
    }
  }

  private runPermissionCheck(): Promise<void> {
    const check = this.permissionCheck!;
    this.permissionsChecked ??= check().then(
      () => {
        if (this.permissionCheck === check) this.permissionCheck = undefined;
      },
      (err: unknown) => {
        if (!(err instanceof LockPermissionError)) this.permissionsChecked = undefined;
        throw err;
      },
    );
    return this.permissionsChecked;
  }

  private runPreflight(): Promise<void> {
    const task = this.preflight!;
    this.preflightRun ??= task()
      .then(
        (done) => {
          if (done && this.preflight === task) this.preflight = undefined;
        },
        () => undefined,
      )
      .finally(() => (this.preflightRun = undefined));
    return this.preflightRun;
  }
}

/** A NOPERM answer (the user lacks EVALSHA or EVAL themselves) as LockPermissionError naming the command. */
function permissionError(err: unknown): LockPermissionError | undefined {
  const message = err instanceof Error ? err.message : '';
  if (!message.startsWith('NOPERM')) return undefined;
  const command = /run the '([^']+)' command/.exec(message)?.[1]?.toUpperCase();
  return new LockPermissionError(
    `The Redis user may not run ${command ?? 'a command the library needs'} (${printable(message)}); ` +
      `see the ACL in docs/SECURITY.md. Nothing was written.`,
    command ? [command] : [],
    err,
  );
}

function withKey(fatal: LockRedisError, userKey?: string): LockRedisError {
  return new LockRedisError(fatal.message, userKey, fatal.cause);
}
/** How one script call is reported and bounded. */
export interface ScriptCall<Reply> {
  /** The user's lock key, named in errors. */
  readonly userKey?: string;
  /** Gets a reply that arrived after the deadline (e.g. to undo a late grant). */
  readonly onLateReply?: (reply: Reply) => void;
  /** Settle within this when shorter than the command timeout. */
  readonly timeoutMs?: number;
}

/** In-flight script calls up to which a new call joins the tick's batch (see RedisGateway.batchWhenBusy). */
const MAX_BATCHED = 128;
/** Scripts that always go out on their own (long-running renewal batches). */
const UNBATCHED_SCRIPTS = new Set(['renew', 'holders-renew']);

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** Wraps any failure as LockRedisError (kept as is when it already is one). */
export function toLockRedisError(err: unknown, operation: string, userKey?: string): LockRedisError {
  if (err instanceof LockRedisError) return err;
  const detail = printable(err instanceof Error ? err.message : String(err));
  return new LockRedisError(
    `Redis failed during ${operation}${userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`}: ${detail}`,
    userKey,
    err,
  );
}
