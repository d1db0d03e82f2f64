import { LockPermissionError, LockRedisError } from '../errors';
import type { Deadline } from '../runtime/deadlines';
import type { Runtime } from '../runtime/runtime';
import { printable, quoteKey } from '../errors/message-text';
import { isFailoverError } from './failover-retry';
import { doorForClient, isRedisClient, type RedisClient } from './redis-client';
import type { RedisDoor } from './redis-door';
import { LuaScript, ScriptArg } from './script-library';

/**
 * What the lock kinds need of the door: run a script, the publish command their release scripts
 * use, and whether the keys spread over a Cluster's slots. RedisGateway is the one on Redis; the
 * testing module's in-memory backend runs TypeScript ports of the same scripts behind it.
 */
export interface ScriptRunner {
  /** PUBLISH, or SPUBLISH on a Redis 7 Cluster (sharded pub/sub). */
  readonly publishCommand: 'PUBLISH' | 'SPUBLISH';
  /** True on a Cluster: one script call may only touch keys of one slot. */
  readonly cluster: boolean;
  /**
   * True when KEYS reach Redis as the library names them (no client-side key prefix, e.g. ioredis'
   * `keyPrefix`): a script may then derive a name from a key (mutex-release.lua's channel).
   */
  readonly keysVerbatim?: boolean;
  run<Args extends readonly ScriptArg[], Reply>(
    script: LuaScript<Args, Reply>,
    keys: readonly string[],
    args: Args,
    call?: ScriptCall<Reply>,
  ): Promise<Reply>;
}

/** Work that must be done before scripts run (see RedisGateway.beforeScripts). */
interface Gate {
  /** Resolves true when done for good; false or a rejection: tried again before the next script. */
  readonly run: () => Promise<boolean>;
  /** A blocking gate's failure fails the script (and a LockPermissionError fails every later one). */
  readonly blocking: boolean;
  /** The LockPermissionError of a blocking gate: every script fails with it from then on. */
  refused?: LockPermissionError;
}

/**
 * The door to one Redis (or Cluster): runs the library's Lua scripts, EVALSHA first and EVAL once on
 * NOSCRIPT (after SCRIPT FLUSH or a failover), behind one gate (work that must come first: the ACL
 * check, the Cluster's publish command), every call bounded by `commandTimeoutMs` on the runtime's one
 * deadline timer, every failure a LockRedisError that names the key and keeps the Redis error as
 * `cause`.
 */
export class RedisGateway implements ScriptRunner {
  /** Wake-ups go out with SPUBLISH on a Redis 7 Cluster (sharded pub/sub), PUBLISH otherwise. */
  publishCommand: 'PUBLISH' | 'SPUBLISH' = 'PUBLISH';

  /** Work that must be done before the next script; a gate leaves once it reports success. */
  private readonly gates: Gate[] = [];
  /** The gates' run in progress, shared by every script waiting for it. */
  private gating?: Promise<void>;
  /** Cluster and Sentinel: failover errors are retried until the command's deadline. */
  readonly ridesOutFailover: boolean;
  readonly cluster: boolean;
  readonly keysVerbatim: boolean;

  /** The one door every command of this deployment goes through. */
  readonly door: RedisDoor;

  constructor(
    /** The door, or a client the user passed (its family's door is made for it). */
    door: RedisDoor | RedisClient,
    private readonly commandTimeoutMs: number,
    /** The engine's clocks and timers: every call's deadline is on its heap. */
    readonly runtime: Runtime,
  ) {
    this.door = isRedisClient(door) ? doorForClient(door) : door;
    this.ridesOutFailover = this.door.ridesOutFailover;
    this.cluster = this.door.cluster;
    this.keysVerbatim = this.door.prefixesKeys !== true;
  }

  /**
   * Runs `run` before the next script, in the order gates were added, until it resolves true. A
   * `blocking` gate (the ACL check) holds scripts until it passes: its failure fails the script, and
   * a LockPermissionError fails every later one the same way (the user lacks what the scripts need,
   * so running them could leave half-written keys). A non-blocking gate (choosing the Cluster's
   * publish command) that fails is tried again before the next script, which runs either way. A
   * blocking gate on a client that is connected already (passed in by the user) runs at once.
   */
  beforeScripts(run: () => Promise<boolean>, blocking: boolean): void {
    this.gates.push({ run, blocking });
    // Reported by the first script that waits for it.
    if (blocking && this.door.ready) this.passGates().catch(() => undefined);
  }

  /**
   * Runs `script`, settling within `commandTimeoutMs` or `timeoutMs` when that is shorter (a caller
   * whose wait ends sooner must not be held by a hanging Redis). A reply that arrives after the
   * timeout goes to `onLateReply` instead of being lost (e.g. to undo a late grant).
   */
  run<Args extends readonly ScriptArg[], Reply>(
    script: LuaScript<Args, Reply>,
    keys: readonly string[],
    args: Args,
    call?: ScriptCall<Reply>,
  ): Promise<Reply> {
    const limit = callLimit(call, this.commandTimeoutMs);
    // The caller's own budget, not commandTimeoutMs, bounds this call: its timeout says so (cutShort).
    const callersBudget = limit < this.commandTimeoutMs;
    return new Promise<Reply>((resolve, reject) => {
      const sent = { script: script as unknown as LuaScript, keys, args, call, limit, callersBudget };
      new PendingScript<Reply>(this, sent, resolve, reject).start();
    });
  }

  /**
   * Asks the door for anything but a script (PING, INFO, WAIT, the registry's MULTI/EXEC), bounded
   * by `timeoutMs` on the runtime's one deadline timer like a script: rejects with `timedOut()` when
   * no answer came in time (a later answer or failure is dropped: the caller has moved on).
   */
  ask<T>(send: (door: RedisDoor) => Promise<T>, timeoutMs: number, timedOut: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let graces = 0;
      const deadline: Deadline = {
        at: this.runtime.now() + timeoutMs,
        slot: -1,
        expire: () => {
          if (!graceAfterStall(this.runtime, deadline, graces++)) reject(timedOut());
        },
      };
      this.runtime.deadlines.schedule(deadline);
      const settle = (done: () => void) => {
        if (deadline.slot < 0) return; // timed out already
        this.runtime.deadlines.remove(deadline);
        done();
      };
      let answer: Promise<T>;
      try {
        answer = send(this.door);
      } catch (err) {
        answer = Promise.reject(err); // a door that throws (no route to a node) fails the call
      }
      answer.then(
        (value) => settle(() => resolve(value)),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  }

  /**
   * PINGs within `timeoutMs`: resolves the round trip in ms (two decimals), or rejects with a
   * LockRedisError that says why (a connection that gave up for good names its own reason).
   */
  async ping(timeoutMs: number, name = 'Redis'): Promise<number> {
    const started = this.runtime.now();
    try {
      await this.ask(
        (door) => door.command(['PING']),
        timeoutMs,
        () => new LockRedisError(`${name} did not answer PING within ${timeoutMs} ms`),
      );
    } catch (err) {
      const fatal = this.door.fatalError();
      if (fatal) throw fatal;
      if (err instanceof LockRedisError) throw err;
      throw new LockRedisError(
        `${name} failed PING: ${err instanceof Error ? err.message : String(err)}`,
        undefined,
        err,
      );
    }
    return Math.round((this.runtime.now() - started) * 100) / 100;
  }

  /** @internal One script call on the wire (PendingScript): EVALSHA, EVAL after NOSCRIPT. */
  dispatch(pending: PendingScript<unknown>, reload: boolean): Promise<unknown> {
    const { script, keys, args } = pending;
    try {
      return this.door.script(script, keys, args, { reload, readOnly: pending.readOnly });
    } catch (err) {
      return Promise.reject(err); // a door that throws (no route to a node) fails the call, not the caller
    }
  }

  /** @internal The error a failed script call rejects with: a LockRedisError that names the key. */
  failure(err: unknown, scriptName: string, userKey?: string): LockRedisError {
    // A connection that gave up for good (credentials, certificate) says why, not "closed".
    const fatal = this.door.fatalError();
    return toLockRedisError(
      fatal ? withKey(fatal, userKey) : (permissionError(err) ?? err),
      scriptName,
      userKey,
    );
  }

  /** @internal Scripts wait for the gates while any is left. */
  get gated(): boolean {
    return this.gates.length > 0;
  }

  /** @internal Runs the gates once for every script waiting on them. */
  passGates(): Promise<void> {
    this.gating ??= (async () => {
      for (const gate of [...this.gates]) {
        if (gate.refused) throw gate.refused;
        let done = false;
        try {
          done = await gate.run();
        } catch (err) {
          if (!gate.blocking) continue;
          if (err instanceof LockPermissionError) gate.refused = err;
          throw err;
        }
        if (done) this.gates.splice(this.gates.indexOf(gate), 1);
      }
    })().finally(() => (this.gating = undefined));
    return this.gating;
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
  /** EVALSHA_RO / EVAL_RO (Redis 7): the script reads only (the ACL check). */
  readonly readOnly?: boolean;
  /** Runs before the gates have passed: only for a gate's own script (the ACL check). */
  readonly ungated?: boolean;
  /** The user's lock key, named in errors. */
  readonly userKey?: string;
  /** Gets a reply that arrived after the deadline (e.g. to undo a late grant). */
  readonly onLateReply?: (reply: Reply) => void;
  /** Settle within this when shorter than the command timeout. */
  readonly timeoutMs?: number;
}

/**
 * How long a call may take: its `timeoutMs` when shorter than `commandTimeoutMs`, at least 1 ms (what
 * every ScriptRunner bounds a call by; shorter than `commandTimeoutMs` means the caller's own budget).
 */
export function callLimit(
  call: { readonly timeoutMs?: number } | undefined,
  commandTimeoutMs: number,
): number {
  return Math.max(1, Math.min(call?.timeoutMs ?? commandTimeoutMs, commandTimeoutMs));
}

/** Timeouts of calls that the caller's own budget ended, before the command timeout would have. */
const cutShort = new WeakSet<Error>();

/**
 * Marks `err` as the timeout of a call that its own `timeoutMs` ended (see endedByCallersBudget):
 * what every ScriptRunner (this gateway, the in-memory backend) does to such a timeout.
 */
export function byCallersBudget<E extends Error>(err: E): E {
  cutShort.add(err);
  return err;
}

/**
 * True for the timeout of a call whose own `timeoutMs` (shorter than `commandTimeoutMs`) ran out: the
 * caller's wait ended while the answer was on its way, which does not show that Redis failed.
 */
export function endedByCallersBudget(err: unknown): boolean {
  return err instanceof Error && cutShort.has(err);
}

export function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** Wraps any failure as LockRedisError (kept as is when it already is one). */
export function toLockRedisError(err: unknown, operation: string, userKey?: string): LockRedisError {
  if (err instanceof LockRedisError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // ioredis' own words name an option most users never set; the error keeps them as its cause.
  const retries = /max retries per request limit \(which is (\d+)\)/.exec(message);
  const detail = retries
    ? `Redis unreachable: the client gave up on the command after ${retries[1]} reconnect attempts (ioredis' maxRetriesPerRequest)`
    : printable(message);
  return new LockRedisError(
    `Redis failed during ${operation}${userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`}: ${detail}`,
    userKey,
    err,
  );
}

/** Graces in a row at most (Runtime.replyGraceMs): a loop that stalls on every turn still times out. */
const MAX_REPLY_GRACES = 3;

/**
 * Moves `deadline`, due now, on by the runtime's reply grace when this process has just stalled (the
 * server may have stalled with it and answer a moment later), at most MAX_REPLY_GRACES times in a row
 * (`graced` so far): true when it did, and the caller does not time out yet.
 */
function graceAfterStall(runtime: Runtime, deadline: Deadline, graced: number): boolean {
  const grace = graced < MAX_REPLY_GRACES ? (runtime.replyGraceMs?.() ?? 0) : 0;
  if (grace <= 0) return false;
  deadline.at = runtime.now() + grace;
  runtime.deadlines.schedule(deadline);
  return true;
}

/** Pause between retries of a script during a failover (ioredis' own retryDelayOnFailover). */
const FAILOVER_RETRY_MS = 100;

/**
 * One script call, from the gates to its answer: its deadline on the runtime's one timer, EVAL once
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
  /** Reply graces taken after stalls of this process (graceAfterStall). */
  private graces = 0;
  readonly readOnly: boolean;
  readonly script: LuaScript;
  readonly keys: readonly string[];
  readonly args: readonly ScriptArg[];
  private readonly call: ScriptCall<Reply> | undefined;
  private readonly limit: number;
  private readonly callersBudget: boolean;

  constructor(
    private readonly gateway: RedisGateway,
    sent: {
      readonly script: LuaScript;
      readonly keys: readonly string[];
      readonly args: readonly ScriptArg[];
      readonly call?: ScriptCall<Reply>;
      /** The call settles within this many ms. */
      readonly limit: number;
      /** `limit` is the caller's `timeoutMs`, shorter than the command timeout. */
      readonly callersBudget: boolean;
    },
    private readonly resolve: (reply: Reply) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    ({
      script: this.script,
      keys: this.keys,
      args: this.args,
      call: this.call,
      limit: this.limit,
      callersBudget: this.callersBudget,
    } = sent);
    this.at = gateway.runtime.now() + sent.limit;
    this.readOnly = sent.call?.readOnly === true;
  }

  start(): void {
    this.gateway.runtime.deadlines.schedule(this);
    this.send();
  }

  /**
   * Runs after the deadline: the caller hears a timeout now, a late reply goes to onLateReply. Right
   * after a stall of this process the deadline moves on a little first (graceAfterStall).
   */
  expire(): void {
    if (graceAfterStall(this.gateway.runtime, this, this.graces++)) return;
    this.timedOut = true;
    const userKey = this.call?.userKey;
    const err = new LockRedisError(
      `Redis did not answer ${this.script.name} within ${Math.ceil(this.limit)} ms` +
        (userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`),
      userKey,
    );
    this.reject(this.callersBudget ? byCallersBudget(err) : err);
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
    // The simulator's fault point: this reply came just after the deadline (Runtime.faultPoint).
    if (
      this.slot >= 0 &&
      this.gateway.runtime.faultPoint?.('reply-after-deadline', this.script.name) === true
    ) {
      this.gateway.runtime.deadlines.remove(this);
      this.expire();
    }
    if (this.slot < 0) {
      if (this.timedOut) this.call?.onLateReply?.(reply);
      return;
    }
    this.gateway.runtime.deadlines.remove(this);
    this.resolve(reply);
  }

  private errored(err: unknown): void {
    if (!this.reloaded && isNoScript(err)) {
      // EVAL both runs and caches the script, so the next EVALSHA hits again.
      this.reloaded = true;
      this.dispatch();
    } else if (this.gateway.ridesOutFailover && isFailoverError(err) && !this.timedOut) {
      // Retried only while the caller still waits for it.
      this.gateway.runtime.setTimer(() => {
        if (!this.timedOut) this.send();
      }, FAILOVER_RETRY_MS);
    } else {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    if (this.slot < 0) return; // timed out already: the caller heard that
    this.gateway.runtime.deadlines.remove(this);
    this.reject(this.gateway.failure(err, this.script.name, this.call?.userKey));
  }
}
