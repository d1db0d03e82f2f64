import { AsyncResource } from 'node:async_hooks';
import { Deadlines, type HeapTimer } from './deadlines';
import { PooledRandomIds } from './random-ids';

/** A timer of a Runtime: cancel() stops it (a no-op once it ran, for a one-shot timer). */
export interface RuntimeTimer {
  cancel(): void;
}

/**
 * An async context kept to run code in later: a caller's (a lock's loss runs in the context of the
 * call that took the lock). In production an AsyncResource, which is one; elsewhere it just calls.
 */
export interface KeptContext {
  /** Calls `fn` on `thisArg` inside the kept context. */
  runInAsyncScope<This>(fn: (this: This) => void, thisArg: This): void;
}

/**
 * The engine's view of the world outside it: its clocks, its timers and its randomness, one object
 * per engine, handed down the floors like any other dependency. Nothing in lib/core reads
 * performance.now(), Date.now(), Math.random() or starts a timer except through one of these, so a
 * simulator that gives each engine a Runtime of its own (virtual time, a drifting clock, a seeded
 * random source) runs the real code unchanged (test/sim/). The production one is `nodeRuntime`.
 */
export interface Runtime {
  /** Monotonic milliseconds: lease, wait and deadline arithmetic never follows wall-clock jumps. */
  now(): number;
  /** Wall-clock epoch milliseconds: only for what people read (registry records, audit entries). */
  wallNow(): number;
  /**
   * Runs `fn` once after `ms`. A timer that `keepsAlive` holds the process open until it runs or is
   * cancelled (a caller is waiting on it); the others do not (a held lock alone never does).
   */
  setTimer(fn: () => void, ms: number, keepsAlive?: boolean): RuntimeTimer;
  /** Runs `fn` every `ms` until cancelled; never keeps the process alive. */
  setRepeating(fn: () => void, ms: number): RuntimeTimer;
  /** Resolves on the next turn of the event loop, after the I/O and microtasks already queued. */
  nextTurn(): Promise<void>;
  /** An unguessable id: 20 random bytes (160 bits), base64url. Owner tokens and hold ids. */
  randomId(): string;
  /** A number in [0, 1): retry jitter. Not for anything that must be unguessable. */
  random(): number;
  /** The earliest-deadline heap on this runtime's clock and timers (see Deadlines). */
  readonly deadlines: Deadlines;
  /**
   * Runs `fn` in the engine's own async context, not its caller's: what `fn` opens for the engine's
   * life (a connection, a subscription, a listener) then calls back in no request's context (no
   * AsyncLocalStorage store, no trace). The timers of this runtime run there already.
   */
  detached<T>(fn: () => T): T;
  /** The caller's async context now, kept for a lock's own events later (its loss): see LockGrant. */
  keepContext(): KeptContext;
  /**
   * How much longer a deadline that judges whether an answer came (a command's timeout) waits now,
   * in ms: more than 0 right after this process did not run for a while (a long GC pause, CPU
   * throttling, a frozen VM), when the server, stalled with it, may answer a moment later. Time this
   * process did not run is no evidence that Redis does not answer. Production: STALL_MS within
   * STALL_MS of a stall its deadline timer saw; elsewhere none (undefined).
   */
  readonly replyGraceMs?: () => number;
  /**
   * BUGGIFY, as FoundationDB calls it: a fault the simulator turns on at a named point of the engine
   * where a real one is hard to time, with what it concerns (a script's name). True: take the rare path
   * now. Production has none (undefined: the engine asks nothing).
   */
  readonly faultPoint?: (point: FaultPoint, subject: string) => boolean;
}

/**
 * The engine's fault points (Runtime.faultPoint):
 * - `reply-after-deadline`: a script's reply arrives just after the deadline it was sent with. The
 *   caller has heard the timeout; the script ran, and its reply goes to the late-reply path (a grant
 *   undone, a renewal counted as failed).
 */
export type FaultPoint = 'reply-after-deadline';

class NodeTimer implements RuntimeTimer {
  constructor(private readonly timer: NodeJS.Timeout) {}

  cancel(): void {
    clearTimeout(this.timer);
  }
}

const ids = new PooledRandomIds();

/**
 * The engine's own async context, made once at module load, outside every caller (issue 47): its
 * timers start in it, and so do the connections and subscriptions it opens on first use. Made inside
 * a request, they would call back in that request's AsyncLocalStorage (and OpenTelemetry) context for
 * the engine's life: its log lines and spans would name a request that has long answered.
 */
const engineContext = new (class EngineContext extends AsyncResource {
  /** It holds nothing open (no handle, no timer): leak checks that ask (Jest's) do not count it. */
  hasRef(): boolean {
    return false;
  }
})('DistributedLockEngine');

/** Node's timer functions, called in the engine's context (no closure per call: the hot path arms timers). */
const detachedTimeout = (fn: () => void, ms: number): NodeJS.Timeout =>
  engineContext.runInAsyncScope(setTimeout, null, fn, ms) as NodeJS.Timeout;
const detachedInterval = (fn: () => void, ms: number): NodeJS.Timeout =>
  engineContext.runInAsyncScope(setInterval, null, fn, ms) as NodeJS.Timeout;

/**
 * A step of the heap's timer (the timer, or the turn it hands on to) this much later than due: this
 * process did not run meanwhile, and for STALL_MS after it a command's deadline waits STALL_MS more
 * (Runtime.replyGraceMs).
 */
const STALL_MS = 50;
/** When the heap's timer last saw a stall (performance.now()); -Infinity before any. */
let stallSeenAt = -Infinity;

/** Notes a stall when a step of the heap's timer, due at `due`, runs more than STALL_MS late. */
function noteStall(due: number): number {
  const now = performance.now();
  if (now - due > STALL_MS) stallSeenAt = now;
  return now;
}

/**
 * The heap's timer in production. What is due is judged after the I/O already waiting: a turn of
 * Node's event loop runs its timers before it reads its sockets, so after a stall longer than a
 * command's budget (a long GC pause, a synchronous stretch of the app, a starved CPU) the command's
 * deadline would expire first, and its reply, read-ready in the socket since the stall, be thrown
 * away: `waitMs: 0` failing with "Redis did not answer within 401 ms" although Redis had. So the
 * timer hands `fire` to setImmediate, which runs after that turn's reads. The immediate stays ref'd:
 * an unref'd one lets that turn's poll block until the next I/O (a late reply would then be read
 * before its deadline fired), and a ref'd one holds the process for that one turn only. Either step
 * running late notes a stall (replyGraceMs): when it froze Redis too, its reply reaches the socket
 * a moment after this process runs again.
 */
function afterWaitingIo(fire: () => void, ms: number): HeapTimer {
  const due = performance.now() + ms;
  let immediate: NodeJS.Immediate | undefined;
  // In the timer's (the engine's) context, so is the immediate.
  const timer = detachedTimeout(() => {
    const queued = noteStall(due);
    immediate = setImmediate(() => {
      noteStall(queued);
      fire();
    });
  }, ms).unref();
  return {
    cancel: () => {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
    keepAlive: (on) => void (on ? timer.ref() : timer.unref()),
  };
}

/** The production runtime: performance.now(), Node's timers, the CSPRNG. One per process. */
export const nodeRuntime: Runtime = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimer(fn, ms, keepsAlive = false) {
    const timer = detachedTimeout(fn, ms);
    if (!keepsAlive) timer.unref();
    return new NodeTimer(timer);
  },
  setRepeating(fn, ms) {
    return new NodeTimer(detachedInterval(fn, ms).unref());
  },
  nextTurn: () => new Promise<void>((resolve) => setImmediate(resolve)),
  randomId: () => ids.next(),
  random: () => Math.random(),
  // Every engine of the process shares the one timer of this heap.
  deadlines: new Deadlines(() => performance.now(), afterWaitingIo),
  detached: (fn) => engineContext.runInAsyncScope(fn),
  // An AsyncResource is the context it was made in; the grant that keeps it lets go of it when it ends.
  keepContext: () => new AsyncResource('DistributedLockGrant'),
  replyGraceMs: () => (performance.now() - stallSeenAt < STALL_MS ? STALL_MS : 0),
};
