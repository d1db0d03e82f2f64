import { LockRedisError } from '../../core/errors';
import { quoteKey } from '../../core/errors/message-text';
import {
  byCallersBudget,
  callLimit,
  ScriptCall,
  ScriptRunner,
  toLockRedisError,
} from '../../core/redis/redis-gateway';
import type { LuaScript, ScriptArg } from '../../core/redis/script-library';
import type { MemoryStore } from './memory-store';
import type { Deadline } from '../../core/runtime/deadlines';
import { nodeRuntime, type Runtime } from '../../core/runtime/runtime';
import { fairAbandon } from './scripts/fair-abandon';
import { fairAcquire } from './scripts/fair-acquire';
import { holdersRenew } from './scripts/holders-renew';
import { ScriptPort, toRedisReply } from './scripts/lua';
import { multiAcquire } from './scripts/multi-acquire';
import { mutexAcquire } from './scripts/mutex-acquire';
import { mutexRelease } from './scripts/mutex-release';
import { readWriteAbandon } from './scripts/read-write-abandon';
import { readWriteAcquire } from './scripts/read-write-acquire';
import { readWriteRelease } from './scripts/read-write-release';
import { renew } from './scripts/renew';
import { semaphoreAcquire } from './scripts/semaphore-acquire';
import { semaphoreRelease } from './scripts/semaphore-release';
import { tokenAcquire } from './scripts/token-acquire';
import { tokenRelease } from './scripts/token-release';

/**
 * The TypeScript ports, by the name of the Lua script (lib/core/scripts/<name>.lua) each mirrors:
 * the scripts the lock kinds and the multi-key locker run. Inspection, force release, RedLock's
 * fence-floor and the ACL check have none: the in-memory backend does not offer them.
 */
export const SCRIPT_PORTS: Readonly<Record<string, ScriptPort>> = {
  'mutex-acquire': mutexAcquire,
  'mutex-release': mutexRelease,
  'token-acquire': tokenAcquire,
  'token-release': tokenRelease,
  renew,
  'read-write-acquire': readWriteAcquire,
  'read-write-release': readWriteRelease,
  'read-write-abandon': readWriteAbandon,
  'semaphore-acquire': semaphoreAcquire,
  'semaphore-release': semaphoreRelease,
  'holders-renew': holdersRenew,
  'fair-acquire': fairAcquire,
  'fair-abandon': fairAbandon,
  'multi-acquire': multiAcquire,
};

/** The names of the scripts MemoryScripts runs (the conformance spec compares each with its Lua). */
export const PORTED_SCRIPTS: readonly string[] = Object.keys(SCRIPT_PORTS);

/**
 * The in-memory backend's door: the ScriptRunner the real lock kinds run their scripts through, with
 * each Lua script replaced by its TypeScript port over a MemoryStore. A script runs atomically
 * (synchronously, the store's clock stopped); its reply is what Redis would send (integers, arrays,
 * nil as null), delivered on a later event-loop turn like a network reply. Like the gateway, a call
 * is bounded by the command timeout or its shorter `timeoutMs` (a reply later than that rejects, and
 * goes to `onLateReply`), every failure is a LockRedisError naming the key, and while failBackend()
 * is in force every call rejects.
 */
export class MemoryScripts implements ScriptRunner {
  /** One process, one "node": plain PUBLISH, no Cluster slots. */
  readonly publishCommand = 'PUBLISH';
  readonly cluster = false;
  /** Keys are stored as named. */
  readonly keysVerbatim = true;

  constructor(
    readonly store: MemoryStore,
    private readonly commandTimeoutMs: number,
    /** The engine's runtime: a call's deadline is on its clock, a reply comes on its next turn. */
    private readonly runtime: Runtime = nodeRuntime,
  ) {}

  run<Args extends readonly ScriptArg[], Reply>(
    script: LuaScript<Args, Reply>,
    keys: readonly string[],
    args: Args,
    call?: ScriptCall<Reply>,
  ): Promise<Reply> {
    const limit = callLimit(call, this.commandTimeoutMs);
    const port = SCRIPT_PORTS[script.name];
    const reply = this.answer(script.name, call?.userKey, () => {
      if (!port) throw new Error(`ERR the in-memory lock backend has no port of ${script.name}.lua`);
      // KEYS and ARGV as Lua sees them: indexed from 1, every argument a string.
      return toRedisReply(port(this.store, ['', ...keys], ['', ...args.map(String)])) as Reply;
    });
    // Bounded on the runtime's deadline heap, as the gateway bounds a script, and judged after the
    // replies already waiting: an event loop held up past the bound still takes a reply that was ready
    // in time (as a Redis reply waiting in the socket is read before the deadline is judged); only a
    // reply the backend itself held back (conformance-sides' late) times out. The heap's own turn may
    // have been queued before this reply's, hence the expiry's one more turn.
    return new Promise<Reply>((resolve, reject) => {
      let settled = false;
      let timedOut = false;
      const deadline: Deadline = {
        at: this.runtime.now() + limit,
        slot: -1,
        expire: () => {
          void this.runtime.nextTurn().then(() => {
            if (settled) return;
            settled = timedOut = true;
            reject(this.timeout(script.name, limit, call?.userKey));
          });
        },
      };
      this.runtime.deadlines.schedule(deadline);
      reply.then(
        (value) => {
          if (settled) {
            if (timedOut) call?.onLateReply?.(value);
            return;
          }
          settled = true;
          this.runtime.deadlines.remove(deadline);
          resolve(value);
        },
        (err: unknown) => {
          if (settled) return; // the caller heard the timeout
          settled = true;
          this.runtime.deadlines.remove(deadline);
          reject(err);
        },
      );
    });
  }

  /** PING: answers on the next turn, or rejects like every call while failBackend() is in force. */
  async ping(): Promise<void> {
    await this.answer('PING', undefined, () => 'PONG');
  }

  /** Runs `command` atomically on the store (unless failing), and answers on a later turn. */
  private async answer<T>(name: string, userKey: string | undefined, command: () => T): Promise<T> {
    const failure = this.store.failure;
    if (failure) {
      await this.runtime.nextTurn();
      const key = userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`;
      throw new LockRedisError(
        `The in-memory lock backend failed ${name}${key} (failBackend): ${failure.message}`,
        userKey,
        failure,
      );
    }
    let reply: T;
    try {
      reply = this.store.atomically(command);
    } catch (err) {
      // A command that failed inside a script (WRONGTYPE, a bad argument): the script stops there,
      // what it wrote stays, as in Redis, and the caller gets the LockRedisError the gateway makes.
      await this.runtime.nextTurn();
      throw toLockRedisError(err, name, userKey);
    }
    await this.runtime.nextTurn();
    return reply;
  }

  private timeout(name: string, limit: number, userKey?: string): LockRedisError {
    const key = userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`;
    const err = new LockRedisError(
      `The in-memory lock backend did not answer ${name} within ${limit} ms${key}`,
      userKey,
    );
    // As the gateway does: a caller's own shorter budget ended it, not the command timeout.
    return limit < this.commandTimeoutMs ? byCallersBudget(err) : err;
  }
}
