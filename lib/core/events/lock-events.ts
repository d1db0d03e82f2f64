import { EventEmitter } from 'node:events';
import type * as diagnosticsChannel from 'node:diagnostics_channel';
import { lockChannels, publishLockEvent, type LockLifecycleEvent } from './lock-channels';
import type { LockEventMap } from './lock-event-map';

/** A typed EventEmitter for LockEventMap. Listener errors never reach the lock engine. */
export class LockEvents extends EventEmitter<LockEventMap> {
  /**
   * True when `name` has a listener or a diagnostics_channel subscriber: callers build an event's
   * payload only then (a lock nobody observes costs no event objects).
   */
  wants(name: keyof LockEventMap): boolean {
    const channel = lockChannels[name as LockLifecycleEvent] as diagnosticsChannel.Channel | undefined;
    return channel?.hasSubscribers === true || this.listenerCount(name) > 0;
  }

  /** Emits without letting a throwing listener break the caller. */
  safeEmit<K extends keyof LockEventMap>(name: K, ...args: LockEventMap[K]): void {
    // Also on node:diagnostics_channel; a channel with no subscriber costs one property read.
    const channel = lockChannels[name as LockLifecycleEvent] as diagnosticsChannel.Channel | undefined;
    if (channel?.hasSubscribers) publishLockEvent(channel, args[0]);
    if (this.listenerCount(name) === 0) return;
    try {
      (this.emit as (n: K, ...a: LockEventMap[K]) => boolean)(name, ...args);
    } catch {
      // Observability must not change lock behaviour.
    }
  }
}
