import { setMaxListeners } from 'node:events';
import { IoredisSubscriber, type IoredisClient } from '../redis/adapters/ioredis-door';
import { answers, askNodes } from '../redis/node-fanout';
import type { RedisClient } from '../redis/redis-client';
import type { WakeupSubscriber } from '../redis/redis-door';
import { DeadlineWait } from '../runtime/deadline-wait';
import type { Runtime } from '../runtime/runtime';
import { withDeadline } from '../runtime/with-deadline';

/** Where waiters hear that a lock was released (pub/sub on Redis, an in-process bus in tests). */
export interface WakeupChannels {
  /** Joins `channel`; resolves once the subscription is confirmed (or given up on: then waiters poll). */
  join(channel: string): Promise<Wakeups>;
  /**
   * Joins `channel` at once when its subscription is already settled (what join() would resolve
   * with, without its wait); undefined when it is not (then join()).
   */
  joinSettled(channel: string): Wakeups | undefined;
  /** Channels with at least one local waiter (for stats and leak tests). */
  readonly channelCount: number;
  /** Drops every subscription and closes what it opened. */
  close(): Promise<void>;
}

/**
 * A door's subscriber, or an object shaped like an ioredis connection typed as a client (the testing
 * backend's in-process stand-in, MemorySubscriber.asClient()).
 */
type SubscriberSource = WakeupSubscriber | RedisClient;

function asSubscriber(source: SubscriberSource): WakeupSubscriber {
  return typeof (source as WakeupSubscriber).onMessage === 'function'
    ? (source as WakeupSubscriber)
    : new IoredisSubscriber(source as IoredisClient);
}

/**
 * Pub/sub wake-ups for waiters. One subscriber connection per engine (one per node for RedLock),
 * opened on first use; one subscription per channel shared by every local waiter of that lock
 * (reference-counted, dropped when the last waiter leaves). A message that lands while a waiter is
 * busy attempting is kept as a flag, so no wake-up is lost between "busy" and "wait".
 */
export class WakeupHub {
  private subscribers?: WakeupSubscriber[];
  private readonly channels = new Map<string, ChannelState>();
  /** Engine-level listeners (force-release notices) by channel: not waiters, not in channelCount. */
  private readonly patterns = new Map<string, Listener>();
  private closed = false;
  /** Aborted by close(): ends the bounded waits for confirmations at once, their timers with them. */
  private readonly closing = new AbortController();

  constructor(
    /** The engine's clocks and timers. */
    private readonly runtime: Runtime,
    /** One subscriber connection, or one per node (RedLock: a release publishes on every node). */
    private readonly createSubscriber: () => SubscriberSource | SubscriberSource[],
    /** Whether to SSUBSCRIBE (sharded pub/sub on a Redis 7 Cluster); asked once per channel. */
    private readonly sharded: () => boolean,
    /** A subscription not confirmed by then is given up on; the waiter polls (backoff) instead. */
    private readonly readyTimeoutMs = 5000,
  ) {
    // Each wait for confirmations listens to `closing` until it settles (withDeadline removes the
    // listener); many channels subscribing at once are normal, not a leak.
    setMaxListeners(0, this.closing.signal);
  }

  /** Joins `channel`; resolves once Redis confirmed the subscription (or it failed: then the waiter polls). */
  async join(channel: string): Promise<Wakeups> {
    let state = this.channels.get(channel);
    if (!state) {
      const sharded = this.sharded();
      const created: ChannelState = {
        refs: 0,
        members: new Set(),
        sharded,
        ready: Promise.resolve(),
        settled: false,
        confirmed: false,
        askedAt: this.runtime.now(),
        asking: false,
      };
      created.ready = this.subscribe(channel, created);
      created.ready.then(
        () => (created.settled = true),
        () => undefined, // the joins awaiting it get the rejection
      );
      state = created;
      this.channels.set(channel, state);
    }
    const member = this.member(channel, state);
    await state.ready;
    return member;
  }

  joinSettled(channel: string): Wakeups | undefined {
    const state = this.channels.get(channel);
    return state?.settled ? this.member(channel, state) : undefined;
  }

  private member(channel: string, state: ChannelState): Wakeups {
    state.refs++;
    const member = new Wakeups(this.runtime, () => this.leave(channel, member), {
      confirmed: () => state.confirmed,
      ask: () => this.askAgain(channel, state),
    });
    state.members.add(member);
    return member;
  }

  /**
   * Listens on `channel` until unlisten() or close(): the engine's force-release notices. A plain
   * SUBSCRIBE of one exact channel, never sharded (a notice PUBLISHed on any Cluster node arrives),
   * and never a PSUBSCRIBE: Redis 7 matches a PSUBSCRIBE pattern literally against the user's channel
   * rules, so the documented `&lock:*` would refuse it (issue 25). Kept apart from the wake-up
   * channels (channelCount counts only those). Rejects when Redis refuses the subscription (ACL);
   * `onRefused` hears a refusal of a resubscription after a reconnect.
   */
  async listen(
    channel: string,
    listener: (message: string) => void,
    onRefused?: (error: unknown) => void,
  ): Promise<void> {
    if (this.closed || this.patterns.has(channel)) return;
    const entry = { listener, onRefused };
    this.patterns.set(channel, entry);
    // One confirmation is enough: a force release PUBLISHes its notice on every node it reaches
    // (RedLock), so one subscribed node hears it. Waiting for every node made a node that was down
    // tear the others down with it: the subscription timed out, was dropped everywhere and asked
    // again 250 ms later, over and over, and a holder on RedLock with one node down missed the
    // force release of its grant (simulator seed 3614). The rest subscribe as they come.
    const all = this.runtime.detached(() =>
      askNodes(
        this.connections(),
        (sub) => this.subscribeOn(sub, channel, false),
        (b) => answers(b).length > 0,
      ),
    );
    const ballot = await withDeadline(this.runtime, all, this.readyTimeoutMs, {
      signal: this.closing.signal,
    });
    const refused = ballot?.find((v) => v && !v.ok);
    if (refused && !refused.ok && answers(ballot!).length === 0) {
      // Asked again by the caller; a listen() that came after an unlisten() meanwhile keeps its own.
      if (this.patterns.get(channel) === entry) this.patterns.delete(channel);
      throw refused.error;
    }
  }

  /** Stops listening on `channel` (the engine holds nothing a notice could be about). */
  unlisten(channel: string): void {
    if (this.patterns.delete(channel)) this.unsubscribeEverywhere(channel, false);
  }

  /**
   * Wakes the local waiters of `channel`. A message `@<owner>` (the fair lock's directed wake-up)
   * wakes only the waiter with that owner id; any other message wakes every waiter.
   */
  notify(channel: string, message = ''): void {
    const state = this.channels.get(channel);
    if (!state) return;
    const only = message.startsWith('@') ? message.slice(1) : undefined;
    for (const member of state.members) {
      // A waiter that did not give its owner id hears every message (the old, undirected way).
      if (only === undefined || member.owner === undefined || member.owner === only) member.wake();
    }
  }

  /** Number of channels with at least one local waiter (for metrics and leak tests). */
  get channelCount(): number {
    return this.channels.size;
  }

  /** Unsubscribes everything and closes the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    for (const state of this.channels.values()) for (const m of state.members) m.wake();
    this.channels.clear();
    this.patterns.clear();
    const subs = this.subscribers ?? [];
    this.subscribers = undefined;
    await askNodes(subs, (sub) => sub.close());
  }

  private leave(channel: string, member: Wakeups): void {
    const state = this.channels.get(channel);
    if (!state || !state.members.delete(member)) return;
    if (--state.refs > 0) return;
    this.channels.delete(channel);
    this.unsubscribeEverywhere(channel, state.sharded);
  }

  /** Drops `channel` on every subscriber connection (none open yet, or closed: nothing to drop). */
  private unsubscribeEverywhere(channel: string, sharded: boolean): void {
    if (!this.subscribers || this.closed) return;
    for (const sub of this.subscribers) {
      // A dead connection has no subscription left; a SUBSCRIBE its client re-sends on the next
      // one is undone when confirmed (subscribeOn).
      sub.unsubscribe(channel, sharded).catch(() => undefined);
    }
  }

  /**
   * Sends the SUBSCRIBE of a channel that was never confirmed once more, as a member goes to sleep
   * on it: one ask at a time, at most one per confirmation bound. A SUBSCRIBE can go unanswered while
   * its connection stays up (a client's commandTimeout, a half-open connection, a lost packet): the
   * channel must not count as joined then, or its waiters would sleep through every release message
   * for as long as the lock stays contended (issue 43, seeds 678 and 1554). Its members poll on the
   * backoff meanwhile (Waiter.sleep).
   */
  private askAgain(channel: string, state: ChannelState): void {
    if (this.closed || state.confirmed || state.asking || this.channels.get(channel) !== state) return;
    if (this.runtime.now() - state.askedAt < this.readyTimeoutMs) return;
    void this.subscribe(channel, state);
  }

  /**
   * SUBSCRIBEs `channel` on every node, waiting for the confirmations within the bound. A node's
   * confirmation marks the channel confirmed, even one that lands after the bound: a release
   * PUBLISHes on every node (RedLock), so one subscribed node is enough to hear it.
   */
  private async subscribe(channel: string, state: ChannelState): Promise<void> {
    if (this.closed) return;
    state.asking = true;
    state.askedAt = this.runtime.now();
    const confirm = (): void => {
      state.confirmed = true;
    };
    // In the engine's context: a connection this opens serves every later waiter (see connections).
    const all = this.runtime.detached(() =>
      askNodes(this.connections(), (sub) => this.subscribeOn(sub, channel, state.sharded).then(confirm)),
    );
    // Without a subscription the waiter still wins through its backoff polling; a node that is
    // down (or frozen) must not hold the waiter here, so the wait for confirmations is bounded.
    await withDeadline(this.runtime, all, this.readyTimeoutMs, { signal: this.closing.signal });
    state.asking = false;
  }

  /**
   * After a reconnect, subscribes `sub` again to every channel and notice channel in use, for connections
   * that do not restore their subscriptions themselves (ioredis', whose own resubscription is off:
   * it leaves its SUBSCRIBE promises unhandled). A failure is left to the next reconnect; waiters
   * poll meanwhile.
   */
  private resubscribe(sub: WakeupSubscriber): void {
    if (this.closed) return;
    const ignore = (): undefined => undefined;
    for (const [channel, state] of this.channels) this.subscribeOn(sub, channel, state.sharded).catch(ignore);
    for (const [channel, { onRefused }] of this.patterns) {
      this.subscribeOn(sub, channel, false).catch((error: unknown) => onRefused?.(error));
    }
  }

  /**
   * SUBSCRIBE (or SSUBSCRIBE) on one connection. Redis may run a SUBSCRIBE after the UNSUBSCRIBE that
   * followed it: a client re-sends a SUBSCRIBE left unanswered by a dropped connection once it is
   * back, but can give up on the UNSUBSCRIBE queued meanwhile (ioredis, after maxRetriesPerRequest
   * attempts). So a confirmation that arrives for a channel nobody wants any more is undone there
   * and then; that UNSUBSCRIBE follows the SUBSCRIBE Redis has just run.
   */
  private async subscribeOn(sub: WakeupSubscriber, channel: string, sharded: boolean): Promise<void> {
    await sub.subscribe(channel, sharded);
    if (!this.closed && !this.channels.has(channel) && !this.patterns.has(channel)) {
      sub.unsubscribe(channel, sharded).catch(() => undefined); // a dead connection dropped it too
    }
  }

  /**
   * The subscriber connections, opened on first use: always inside runtime.detached(), so their
   * messages and reconnects call back in the engine's context, not the first waiter's (issue 47).
   */
  private connections(): WakeupSubscriber[] {
    if (!this.subscribers) {
      const created = this.createSubscriber();
      this.subscribers = (Array.isArray(created) ? created : [created]).map(asSubscriber);
      const onMessage = (channel: string, message: string) => {
        const notices = this.patterns.get(channel);
        if (notices) notices.listener(message);
        else this.notify(channel, message);
      };
      for (const sub of this.subscribers) {
        sub.onMessage(onMessage);
        sub.onReconnect?.(() => this.resubscribe(sub));
      }
    }
    return this.subscribers;
  }
}

interface Listener {
  listener: (message: string) => void;
  onRefused?: (error: unknown) => void;
}

interface ChannelState {
  refs: number;
  members: Set<Wakeups>;
  /** How this channel was subscribed, so it is unsubscribed the same way. */
  sharded: boolean;
  ready: Promise<void>;
  /** `ready` has resolved: a waiter joins without waiting (joinSettled). */
  settled: boolean;
  /** A node confirmed a SUBSCRIBE: release messages reach the members. */
  confirmed: boolean;
  /** When the latest SUBSCRIBE was sent (runtime.now()). */
  askedAt: number;
  /** A SUBSCRIBE is in flight (not yet answered nor given up on). */
  asking: boolean;
}

/** A member's view of its channel's subscription. */
interface Subscription {
  /** A node confirmed the SUBSCRIBE. */
  confirmed(): boolean;
  /** Sends the SUBSCRIBE again when it was never confirmed (WakeupHub.askAgain). */
  ask(): void;
}

/**
 * One waiter's view of a channel: `wait()` returns on a message (or wake()) or at its timeout, a
 * DeadlineWait on the runtime's one heap: a hand-off or a release message usually ends the wait long
 * before it.
 */
export class Wakeups extends DeadlineWait<void> {
  private pending = false;

  /** The waiter's owner id, for directed wake-ups (`@<owner>`); set by kinds that use them. */
  owner?: string;

  constructor(
    runtime: Runtime,
    private readonly onLeave: () => void,
    private readonly subscription?: Subscription,
  ) {
    super(runtime);
  }

  /**
   * Whether release messages reach this channel: false while its SUBSCRIBE was never confirmed
   * (unanswered within the bound, or refused); then the waiter polls on its backoff.
   */
  get subscribed(): boolean {
    return this.subscription?.confirmed() ?? true;
  }

  /**
   * Resolves at the next wake-up (or at once if one arrived since the last wait) or after `ms`. An
   * abort reaches it as a wake-up (Waiter.interrupt).
   */
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    if (!this.subscribed) this.subscription!.ask();
    return this.sleep(ms);
  }

  /** Forgets wake-ups that arrived before now (they describe a lock state that has changed since). */
  discardPending(): void {
    this.pending = false;
  }

  /** Marks a wake-up; ends a wait in progress. */
  wake(): void {
    this.pending = true;
    this.endWait();
  }

  /** @internal The wait's time ran out (Deadline). */
  expire(): void {
    this.endWait();
  }

  /** Leaves the channel (unsubscribes when this was the last local waiter). */
  leave(): void {
    this.wake();
    this.onLeave();
  }

  /** Ends a wait in progress; the wake-up that ended it is taken. */
  private endWait(): void {
    if (this.end()) this.pending = false;
  }
}
