import { EventEmitter } from 'node:events';
import type { RedisClient } from '../../core/redis/redis-client';
import type { MemoryStore } from './memory-store';

/**
 * An in-process stand-in for the subscriber connection that WakeupHub opens: it answers
 * (s)subscribe / (s)unsubscribe and emits `message` for the store's publishes on subscribed
 * channels. With it the engine runs the real WakeupHub (shared subscriptions, pending wake-ups).
 * Only the members WakeupHub and closeConnection use exist; it is cast to RedisClient for them.
 */
export class MemorySubscriber extends EventEmitter {
  /** closeConnection() skips QUIT for a connection whose status is `end`. */
  status: 'ready' | 'end' = 'ready';
  private readonly channels = new Set<string>();
  private readonly stop: () => void;

  constructor(store: MemoryStore) {
    super();
    this.stop = store.onPublish((channel, message) => {
      // The message as published: `@<owner>` wakes only that waiter (the fair lock's queue head).
      if (this.channels.has(channel)) this.emit('message', channel, message);
    });
  }

  subscribe(channel: string): Promise<number> {
    this.channels.add(channel);
    return Promise.resolve(this.channels.size);
  }

  unsubscribe(channel: string): Promise<number> {
    this.channels.delete(channel);
    return Promise.resolve(this.channels.size);
  }

  ssubscribe(channel: string): Promise<number> {
    return this.subscribe(channel);
  }

  sunsubscribe(channel: string): Promise<number> {
    return this.unsubscribe(channel);
  }

  /** Ends the shim: no more messages. */
  end(): void {
    this.status = 'end';
    this.channels.clear();
    this.stop();
  }

  disconnect(): void {
    this.end();
  }

  /** This shim, typed as the connection WakeupHub expects. */
  asClient(): RedisClient {
    return this as unknown as RedisClient;
  }
}
