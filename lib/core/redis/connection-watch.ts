import type { ConnectionState } from '../events/lock-event-map';
import type { RedisDoor } from './redis-door';

/**
 * Reports a connection's ups and downs once per change: clients repeat `error` on every reconnect
 * attempt, and a log line per attempt would bury the one that matters.
 */
export function watchConnection(
  door: RedisDoor,
  name: string,
  listener: (state: ConnectionState) => void,
): void {
  let state: 'up' | 'down' | undefined = door.ready ? 'up' : undefined;
  door.watch((next, reason) => {
    if (state === next) return;
    state = next;
    listener({ name, state: next, ...(reason !== undefined && { reason }) });
  });
}
