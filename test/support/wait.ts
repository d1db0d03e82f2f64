/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Options for {@link waitUntil}. */
export interface WaitUntilOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is being waited for; used in the timeout error. */
  description?: string;
}

/**
 * Polls `check` until it returns a value other than `undefined`/`false`, and returns it.
 * Exceptions thrown by `check` count as "not yet"; the last one is quoted on timeout.
 */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitUntilOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 20, description = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? '' : `; last error: ${String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${cause}`);
    }
    await sleep(intervalMs);
  }
}
