/**
 * Replies and client errors that mean "a failover or a resharding is under way": the master is
 * gone or being replaced, the slot is moving, the client is reconnecting. On a Cluster or a
 * Sentinel deployment these pass within seconds, so a script is worth retrying until its deadline.
 * The texts of every client family: ioredis/iovalkey ("Connection is closed", "max retries per
 * request"), node-redis ("The client is closed", "Socket closed unexpectedly"), GLIDE (its
 * ConnectionError / ClosingError).
 */
const FAILOVER_ERROR =
  /^(?:CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY)\b|Connection is closed|Too many Cluster redirections|max retries per request|ECONNREFUSED|ECONNRESET|EPIPE|None of startup nodes|Cluster isn't ready|Stream isn't writeable|The client is closed|Socket closed unexpectedly|Connection timeout|ConnectionError|ClosingError/i;

/** True when `err` is one of the transient failover / resharding errors. */
export function isFailoverError(err: unknown): boolean {
  return err instanceof Error && (FAILOVER_ERROR.test(err.message) || FAILOVER_ERROR.test(err.name));
}
