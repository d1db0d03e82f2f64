import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { LockEventMap } from './lock-event-map';

/** Prefix of every channel name: `nestjs-distributed-lock:<event>`. */
export const LOCK_CHANNEL_PREFIX = 'nestjs-distributed-lock:';

/** The lifecycle events, one diagnostics channel each (`forceReleased`, an operator's act, has none). */
export type LockLifecycleEvent = Exclude<keyof LockEventMap, 'forceReleased'>;

/** The payload of each channel: the same object the engine's `events` emit. */
export type LockChannelMessage<K extends keyof LockEventMap> = LockEventMap[K][0];

/** The channel name of one lifecycle event, e.g. `nestjs-distributed-lock:acquired`. */
export function lockChannelName(event: keyof LockEventMap): string {
  return `${LOCK_CHANNEL_PREFIX}${event}`;
}

const names = [
  'acquired',
  'notAcquired',
  'contended',
  'released',
  'renewed',
  'lost',
  'connection',
  'refusal',
] as const;
// A compile error here means LockEventMap gained an event that has no channel yet.
const everyEventNamed: [Exclude<LockLifecycleEvent, (typeof names)[number]>] extends [never] ? true : never =
  true;
void everyEventNamed;

/**
 * One node:diagnostics_channel channel per lifecycle event, shared by every engine in the process.
 * Channels are looked up once here (a named channel is a process-wide singleton) so publishing
 * costs one `hasSubscribers` read when nobody listens.
 */
export const lockChannels: { readonly [K in LockLifecycleEvent]: diagnosticsChannel.Channel } = Object.freeze(
  Object.fromEntries(names.map((name) => [name, diagnosticsChannel.channel(lockChannelName(name))])) as {
    [K in LockLifecycleEvent]: diagnosticsChannel.Channel;
  },
);

/**
 * Publishes one event. Node reports a subscriber's throw as an uncaught exception on the next tick
 * (that is diagnostics_channel's contract); it never reaches the lock call that published.
 */
export function publishLockEvent(channel: diagnosticsChannel.Channel, message: unknown): void {
  channel.publish(message);
}
