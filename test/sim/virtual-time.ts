import { Deadlines } from '../../lib/core/runtime/deadlines';
import type { FaultPoint, KeptContext, Runtime, RuntimeTimer } from '../../lib/core/runtime/runtime';
import { Prng } from './prng';

/**
 * One thing due at a true (virtual) time: a timer of a process, a packet arriving, a fault. It is its
 * own handle (cancel), and the heap timer of a process' Deadlines (keepAlive): one object per event.
 */
export class SimEvent {
  cancelled = false;

  constructor(
    public at: number,
    /** Breaks ties between events due at the same time: drawn from the seed. */
    readonly tie: number,
    readonly seq: number,
    /** The process it runs in: deferred while that process is paused. */
    readonly owner: SimProcess | undefined,
    readonly run: () => void,
  ) {}

  cancel(): void {
    this.cancelled = true;
  }

  /** Nothing keeps a simulated process alive: the simulation runs until its end. */
  keepAlive(): void {}
}

/**
 * The simulation's one event queue in virtual time. Every timer of every simulated process, every
 * packet between a process and a server and every fault is an event here; nothing else runs. Events
 * due at the same time run in an order drawn from the seed, so a seed fixes one interleaving and
 * another seed explores another. After each event the microtasks it started (the engine's promise
 * chains) run to the end before the next event: the engine sees time stand still while it reacts,
 * as a process on a fast CPU would.
 */
export class Simulation {
  /** True time in ms since the start. */
  now = 0;
  private readonly heap: SimEvent[] = [];
  private seq = 0;
  /** Events run so far. */
  steps = 0;

  constructor(readonly prng: Prng) {}

  /** Runs `run` at true time `at` (not before now), in `owner`'s process when given. */
  at(at: number, run: () => void, owner?: SimProcess): SimEvent {
    const event = new SimEvent(Math.max(at, this.now), this.prng.next(), this.seq++, owner, run);
    this.push(event);
    return event;
  }

  /** Runs `run` after `ms` of true time. */
  after(ms: number, run: () => void, owner?: SimProcess): SimEvent {
    return this.at(this.now + ms, run, owner);
  }

  /**
   * A turn of the real event loop per event (settle()) instead of the drain in place: the slow way,
   * kept for the spec that shows both run the same microtasks in the same order.
   */
  static turnPerEvent = false;
  /** Runs that drained in place (the spec checks the fast way is the one it compared). */
  static runsDrainedInPlace = 0;

  /**
   * Runs events in order until none is due by `until` (true ms): time is then `until`. Or until
   * `stop()` says so after an event: time is then that event's.
   */
  async run(until: number, stop?: () => boolean): Promise<void> {
    // In a macrotask of its own when the engine's queues can be drained in place: then every event
    // and its drain run in one turn of the real loop (see drainQueues); otherwise a turn per event.
    const outcome = await new Promise<'ran' | 'stopped' | undefined>((resolve, reject) =>
      setImmediate(() => {
        try {
          resolve(!Simulation.turnPerEvent && canDrainInPlace() ? this.runDraining(until, stop) : undefined);
        } catch (err) {
          reject(err);
        }
      }),
    );
    if (outcome === 'stopped') return;
    if (outcome === undefined) {
      while (this.step(until)) {
        await settle();
        // Stopped: time stays at the event that stopped it.
        if (stop?.()) return;
      }
    }
    this.now = Math.max(this.now, until);
  }

  /** The events up to `until`, each followed by a drain of what it queued, or until `stop()`. */
  private runDraining(until: number, stop?: () => boolean): 'ran' | 'stopped' {
    Simulation.runsDrainedInPlace++;
    while (this.step(until)) {
      drainQueues!();
      if (stop?.()) return 'stopped';
    }
    return 'ran';
  }

  /** Runs the next event due by `until` (a paused process' events move to its resume); false when none is. */
  private step(until: number): boolean {
    for (;;) {
      const next = this.pop(until);
      if (!next) return false;
      if (next.cancelled) continue;
      const pausedUntil = next.owner?.pausedUntil ?? 0;
      if (pausedUntil > next.at) {
        // A paused process runs nothing: what falls due meanwhile runs when it resumes.
        next.at = pausedUntil;
        this.push(next);
        continue;
      }
      this.now = next.at;
      this.steps++;
      next.run();
      return true;
    }
  }

  private push(event: SimEvent): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = event;
  }

  private pop(until: number): SimEvent | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (!top || top.at > until) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heap.length) break;
        const r = l + 1;
        const c = r < heap.length && before(heap[r]!, heap[l]!) ? r : l;
        if (!before(heap[c]!, last)) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = last;
    }
    return top;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && (a.tie < b.tie || (a.tie === b.tie && a.seq < b.seq)));
}

/**
 * Lets every microtask queued so far run (and those they queue): a macrotask of the real event loop
 * runs only once the microtask queue is empty. Nothing else is on the real loop during a simulation.
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Node's own drain, the one it runs after every macrotask (`process._tickCallback`, undocumented,
 * DEP0134): the nextTick queue and V8's microtask queue, over and over until both are empty, and the
 * unhandled rejections. Called from a macrotask (not from a microtask, where V8 would not re-enter
 * its queue) it leaves exactly what an empty real loop turn leaves, without the turn: the same
 * microtasks run in the same order as with settle(), at a fraction of its cost.
 */
const drainQueues = (process as { _tickCallback?: () => void })._tickCallback;

/** True when drainQueues runs a microtask queued here (checked before each run: it is not public API). */
function canDrainInPlace(): boolean {
  if (typeof drainQueues !== 'function') return false;
  let ran = false;
  queueMicrotask(() => void (ran = true));
  drainQueues();
  return ran;
}

/** How a process' clock runs against true time: an offset, a rate (drift) and pauses. */
export interface ClockModel {
  /** Local monotonic ms at true time 0. */
  readonly offsetMs: number;
  /** Local ms per true ms: 1.004 runs 0.4 % fast. */
  readonly rate: number;
}

/**
 * One simulated process: its clock (offset and drift against true time), its pauses (a GC pause or
 * SIGSTOP: none of its events run, its clock runs on), and the Runtime its engine is built with.
 */
export class SimProcess {
  pausedUntil = 0;
  readonly runtime: Runtime;
  /**
   * BUGGIFY (Runtime.faultPoint): the probability that a reply of a script this accepts (all when
   * omitted) comes just after its deadline. 0: the fault point is off, and no random number is drawn
   * for it (a run without it replays as before).
   */
  lateReplies: { probability: number; scripts?: (name: string) => boolean } = { probability: 0 };

  constructor(
    readonly name: string,
    readonly sim: Simulation,
    readonly clock: ClockModel,
    prng: Prng,
  ) {
    this.runtime = new SimRuntime(this, prng);
  }

  /** The process' monotonic clock now. */
  localNow(): number {
    return this.clock.offsetMs + this.sim.now * this.clock.rate;
  }

  /** Told of each fault point taken (the trace prints it). */
  onFault?: (text: string) => void;

  /** Pauses the process for `ms` of true time from now. */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.sim.now + ms);
  }
}

/** Wall-clock ms at true time 0 (2026-11-29): what registry records and audit entries read. */
export const SIM_EPOCH_MS = Date.UTC(2026, 10, 29);

/** A process' Runtime in virtual time: its timers are events of the simulation, its ids from the seed. */
class SimRuntime implements Runtime {
  readonly deadlines: Deadlines;

  constructor(
    private readonly process: SimProcess,
    private readonly prng: Prng,
  ) {
    this.deadlines = new Deadlines(
      () => this.now(),
      (fire, ms) => this.setTimer(fire, ms),
    );
  }

  now(): number {
    return this.process.localNow();
  }

  wallNow(): number {
    return SIM_EPOCH_MS + this.now();
  }

  setTimer(fn: () => void, ms: number): SimEvent {
    // `ms` of the process' clock: fewer true ms on a clock that runs fast.
    const { sim } = this.process;
    return sim.after(Math.max(0, ms) / this.process.clock.rate, fn, this.process);
  }

  setRepeating(fn: () => void, ms: number): RuntimeTimer {
    let current: RuntimeTimer | undefined;
    let cancelled = false;
    const tick = (): void => {
      if (cancelled) return;
      current = this.setTimer(tick, ms);
      fn();
    };
    current = this.setTimer(tick, ms);
    return {
      cancel: () => {
        cancelled = true;
        current?.cancel();
      },
    };
  }

  readonly faultPoint = (_point: FaultPoint, script: string): boolean => {
    const { probability, scripts } = this.process.lateReplies;
    if (probability <= 0 || (scripts !== undefined && !scripts(script))) return false;
    const late = this.prng.next() < probability;
    if (late) this.process.onFault?.(`BUGGIFY: the reply of ${script} comes just after its deadline`);
    return late;
  };

  nextTurn(): Promise<void> {
    return new Promise((resolve) => this.process.sim.after(0, resolve, this.process));
  }

  randomId(): string {
    return this.prng.bytes(20).toString('base64url');
  }

  random(): number {
    return this.prng.next();
  }

  /** One simulated process runs in one async context: nothing to leave or keep. */
  detached<T>(fn: () => T): T {
    return fn();
  }

  keepContext(): KeptContext {
    return CALLING_CONTEXT;
  }
}

/** A kept context that just calls (the simulation has no async contexts to tell apart). */
const CALLING_CONTEXT: KeptContext = {
  runInAsyncScope: (fn, thisArg) => fn.call(thisArg),
};
