import type { ScriptRun } from './sim-server';

/**
 * What happened in one simulated run, in true time: the only thing the checker reads. The workload
 * records each call and what each holder believed; the world records every fault; the servers keep
 * every script they ran. Nothing here knows the engine's insides.
 */

/** How a key is locked: its kind and what that allows side by side. */
export type KeyClass = 'mutex' | 'token' | 'read-write' | 'semaphore' | 'fair';

export interface CallRecord {
  readonly id: number;
  readonly process: string;
  readonly keys: readonly string[];
  readonly keyClass: KeyClass;
  readonly mode?: 'read' | 'write';
  /** The semaphore's limit (holders at once). */
  readonly limit?: number;
  readonly waitMs: number;
  readonly leaseMs?: number;
  readonly requestedAt: number;
  /** A re-entry inside the caller's own critical section: not a holder of its own. */
  readonly reentry: boolean;
  /** When the call settled, and how. */
  settledAt?: number;
  outcome?: 'granted' | 'busy' | 'redis-error' | 'aborted' | 'closed' | 'other';
  error?: string;
  /** Tokens by key, for a grant. */
  tokens?: Record<string, number>;
  /** When the holder stopped believing it held: release() called, or its signal aborted. */
  endedAt?: number;
  lostAt?: number;
  lostReason?: string;
  releasedAt?: number;
  releaseResult?: boolean;
}

export interface WriteRecord {
  readonly call: number;
  readonly key: string;
  readonly token: number;
  readonly at: number;
  readonly accepted: boolean;
}

export type FaultKind =
  | 'kill'
  | 'restart-aof'
  | 'restart-empty'
  | 'failover'
  | 'client-pause'
  | 'process-pause'
  | 'partition'
  | 'heal'
  | 'network-noise'
  | 'network-quiet'
  | 'force-release'
  | 'close';

export interface FaultRecord {
  readonly at: number;
  readonly kind: FaultKind;
  readonly target: string;
  readonly detail?: string;
  /** For pauses: how long (true ms). */
  readonly ms?: number;
  /** After a restart or failover: the user keys whose lock the server (the promoted replica) still has. */
  kept?: string[];
  /** The user keys whose lock it had just before, and lost. */
  lost?: string[];
  /** Restarts and failovers: the locks it kept with a lease that ends sooner in true time (missed renewals, a clock ahead). */
  shortened?: string[];
}

/** An operator's force release (the console, the CLI), run from one process' engine. */
export interface ForceReleaseCall {
  readonly key: string;
  readonly keyClass: KeyClass;
  readonly process: string;
  readonly at: number;
  settledAt?: number;
  /** forceRelease()'s answer (true: something was evicted), or its error. */
  result?: boolean | string;
}

/**
 * The scripts whose runs the checker reads (the wake-up and force-release checks): an untraced world
 * keeps only these in `runs`. A check that reads another script's runs adds it here.
 */
export const CHECKED_SCRIPTS: ReadonlySet<string> = new Set(['mutex-release', 'force-release']);

/**
 * Whether the checker reads the run of `script` that answered `reply` in a world of `topology`:
 * CHECKED_SCRIPTS; on RedLock every acquire too (the force-release check finds the attempt that won a
 * grant: checker.ts, winningAttemptHeldBefore; seed 1392); elsewhere each acquire that granted (when the
 * server granted: checker.ts, serverGrants; seed 2951), and what the busy check reads of what the
 * server held for no grant (checker.ts, serverHolds; seeds 5163, 5703, 6781).
 */
export function checkerReads(script: string, topology: string, reply: unknown): boolean {
  if (CHECKED_SCRIPTS.has(script) || WAITING_PLACE_SCRIPTS.has(script)) return true;
  if (!script.endsWith('-acquire')) return false;
  if (topology === 'redlock') return true;
  // A fair or read-write attempt refused takes or keeps a waiting place (checker.ts, serverHolds).
  if (Array.isArray(reply) && reply[0] === 0)
    return script === 'fair-acquire' || script === 'read-write-acquire';
  return Array.isArray(reply) && reply[0] === 1;
}

/**
 * Runs that end what the busy check counts as held on the server (checker.ts, serverHolds): a
 * waiting place's abandon, a multi-key round's token-lock give-back (mutex-release is in CHECKED_SCRIPTS).
 */
const WAITING_PLACE_SCRIPTS: ReadonlySet<string> = new Set([
  'fair-abandon',
  'read-write-abandon',
  'token-release',
]);

export class History {
  readonly calls: CallRecord[] = [];
  readonly writes: WriteRecord[] = [];
  readonly faults: FaultRecord[] = [];
  readonly forceReleases: ForceReleaseCall[] = [];
  readonly problems: string[] = [];
  /** Each process' connection events (the engine's `connection` event), in order. */
  readonly connections: { readonly process: string; readonly state: 'up' | 'down'; readonly at: number }[] =
    [];
  /** Each process' engine id (what scripts name a process by). */
  readonly engineIds = new Map<string, string>();
  /** Each process' clock rate against true time (local ms per true ms; below 1 runs slow). */
  readonly clockRates = new Map<string, number>();
  /**
   * The scripts the servers ran, in true time (what Redis did: the omniscient view): those of
   * CHECKED_SCRIPTS, or every one in a traced world (a replay).
   */
  runs: readonly ScriptRun[] = [];
  /** Lines of the readable trace (kept only when asked: a replay). */
  readonly trace: string[] = [];

  constructor(readonly tracing: boolean) {}

  note(at: number, who: string, text: string): void {
    if (this.tracing) this.trace.push(`${at.toFixed(3).padStart(10)} ms  ${who.padEnd(10)} ${text}`);
  }
}
