import type { LockBackend } from './lock-backend';

/** Held grants, local waiters and subscribed channels of one engine. */
export interface LockEngineStats {
  held: number;
  watchdog: number;
  waitingLocks: number;
  channels: number;
  closed: boolean;
}

/** Whether the engine can serve locks now: its storage answered a PING, or why not. */
export type LockEngineReadiness =
  { ready: true; latencyMs: number } | { ready: false; reason: string; error?: unknown };

/** PINGs the storage within `timeoutMs`: ready with the round trip, or why not. Never throws. */
export async function pingReadiness(backend: LockBackend, timeoutMs: number): Promise<LockEngineReadiness> {
  try {
    return { ready: true, latencyMs: await backend.ping(timeoutMs) };
  } catch (error) {
    return { ready: false, reason: error instanceof Error ? error.message : String(error), error };
  }
}
