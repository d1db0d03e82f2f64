import type { ConnectionState } from '../engine/lock-events';
import type { RedisClient } from './redis-client';
import { printable } from '../options/validation';
import { fatalConnectionError } from './redis-connection';

/**
 * Reports a connection's ups and downs once per change: ioredis repeats `error` on every reconnect
 * attempt, and a log line per attempt would bury the one that matters.
 */
export function watchConnection(
  client: RedisClient,
  name: string,
  listener: (state: ConnectionState) => void,
): void {
  let state: 'up' | 'down' | undefined;
  const report = (next: 'up' | 'down', reason?: string) => {
    if (state === next) return;
    state = next;
    listener({ name, state: next, ...(reason !== undefined && { reason }) });
  };
  if (client.status === 'ready') state = 'up';
  client.on('ready', () => report('up'));
  client.on('error', (error: Error) =>
    report('down', fatalConnectionError(client)?.message ?? printable(error.message || error.name)),
  );
  client.on('close', () => {
    // A close we asked for (quit/disconnect at shutdown) is not an outage.
    if (client.status !== 'end') report('down', 'connection closed');
  });
}
