import { RedisClient } from './redis-client';

/**
 * Pub/sub wake-ups for waiters. One subscriber connection per engine, opened on first use; one
 * subscription per channel shared by every local waiter of that lock (reference-counted, dropped
 * when the last waiter leaves). A message that lands while a waiter is busy attempting is kept as a
 * flag, so no wake-up is lost between "busy" and "wait".
 */
export class WakeupHub {
  private subscriber?: RedisClient;
  private readonly channels = new Map<string, ChannelState>();
  private closed = false;

  constructor(
    private readonly createSubscriber: () => RedisClient,
    private readonly sharded: () => boolean,
  ) {}

  /** Joins `channel`; resolves once Redis confirmed the subscription (or it failed: then the waiter polls). */
  async join(channel: string): Promise<Wakeups> {
    let state = this.channels.get(channel);
    if (!state) {
      state = { refs: 0, members: new Set(), ready: this.subscribe(channel) };
      this.channels.set(channel, state);
    }
    state.refs++;
    const member = new Wakeups(() => this.leave(channel, member));
    state.members.add(member);
    await state.ready;
    return member;
  }

  /** Wakes the local waiters of `channel` without a round trip (used after a local release). */
  notify(channel: string): void {
    const state = this.channels.get(channel);
    if (state) for (const member of state.members) member.wake();
  }

  /** Number of channels with at least one local waiter (for metrics and leak tests). */
  get channelCount(): number {
    return this.channels.size;
  }

  /** Unsubscribes everything and closes the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const state of this.channels.values()) for (const m of state.members) m.wake();
    this.channels.clear();
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (sub) {
      sub.removeAllListeners('message');
      sub.removeAllListeners('smessage');
      await sub.quit().catch(() => sub.disconnect());
    }
  }

  private leave(channel: string, member: Wakeups): void {
    const state = this.channels.get(channel);
    if (!state || !state.members.delete(member)) return;
    if (--state.refs > 0) return;
    this.channels.delete(channel);
    const sub = this.subscriber;
    if (sub && !this.closed) {
      const done = this.sharded() ? sub.sunsubscribe(channel) : sub.unsubscribe(channel);
      done.catch(() => undefined); // a dead connection has no subscription left to drop
    }
  }

  private async subscribe(channel: string): Promise<void> {
    if (this.closed) return;
    const sub = this.connection();
    try {
      if (this.sharded()) await sub.ssubscribe(channel);
      else await sub.subscribe(channel);
    } catch {
      // Without a subscription the waiter still wins through its backoff polling.
    }
  }

  private connection(): RedisClient {
    if (!this.subscriber) {
      const sub = this.createSubscriber();
      const onMessage = (channel: string) => this.notify(channel);
      sub.on('message', onMessage);
      sub.on('smessage', onMessage);
      sub.on('error', () => undefined); // reconnects are ioredis' job; waiters fall back to polling meanwhile
      this.subscriber = sub;
    }
    return this.subscriber;
  }
}

interface ChannelState {
  refs: number;
  members: Set<Wakeups>;
  ready: Promise<void>;
}

/** One waiter's view of a channel: `wait()` returns on a message, the timeout, or an abort. */
export class Wakeups {
  private pending = false;
  private resolveWait?: () => void;

  constructor(private readonly onLeave: () => void) {}

  /** Resolves at the next wake-up (or at once if one arrived since the last wait), after `ms`, or on abort. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.pending || signal?.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.resolveWait = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      this.resolveWait = done;
    });
  }

  /** Marks a wake-up; ends a wait in progress. */
  wake(): void {
    this.pending = true;
    this.resolveWait?.();
  }

  /** Leaves the channel (unsubscribes when this was the last local waiter). */
  leave(): void {
    this.wake();
    this.onLeave();
  }
}
