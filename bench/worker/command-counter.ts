import Redis from 'ioredis';

const EXCLUDED = Symbol('bench-excluded-client');
let sent = 0;

/**
 * Counts every command any ioredis client of this process sends (each one a round trip's worth
 * of work for Redis, whatever Lua it runs), except on clients marked with `exclude()` (the
 * benchmark's own counter reads and writes). One prototype patch covers clients the libraries
 * create internally too.
 */
export function installCommandCounter(): void {
  const proto = Redis.prototype as unknown as {
    sendCommand: (...args: unknown[]) => unknown;
    [EXCLUDED]?: true;
  };
  const original = proto.sendCommand;
  if ((original as { counted?: true }).counted) return;
  const counted = function (this: Record<symbol, unknown>, ...args: unknown[]) {
    if (!this[EXCLUDED]) sent++;
    return original.apply(this, args);
  };
  (counted as { counted?: true }).counted = true;
  proto.sendCommand = counted;
}

/** Marks a client whose commands are not the lock's (not counted). */
export function exclude<T extends Redis>(client: T): T {
  (client as unknown as Record<symbol, unknown>)[EXCLUDED] = true;
  return client;
}

/**
 * Counts the commands of a client that is not ioredis (node-redis, GLIDE: the adapters of this
 * library's rows on those clients wrap the one method every command goes through).
 */
export function countCommand(): void {
  sent++;
}

/** Commands sent so far by counted clients. */
export function commandsSent(): number {
  return sent;
}
