/** Keys whose hold times are remembered (least recently updated forgotten first). */
const MAX_HOLD_TIME_KEYS = 1_000;
/** Weight of the newest hold in the moving average of hold times. */
const HOLD_TIME_ALPHA = 0.3;

/**
 * Recent hold times per key, from this process' own releases: the honest "retry after" for a lock
 * kept alive by the watchdog, whose remaining lease (up to 30 s) says nothing about when it frees.
 */
export class HoldTimes {
  private readonly averages = new Map<string, number>();
  /** The key recorded last: already last in the Map's order. */
  private newest?: string;

  /** Records one hold of `key` that lasted `heldMs`. */
  record(key: string, heldMs: number): void {
    const previous = this.averages.get(key);
    // Re-inserted last: Map order is the eviction order. The newest key is last already, and a delete
    // and insert of the same key on every release made V8 rebuild a small Map's table each time.
    if (previous !== undefined && key !== this.newest) this.averages.delete(key);
    this.newest = key;
    this.averages.set(
      key,
      previous === undefined ? heldMs : previous + HOLD_TIME_ALPHA * (heldMs - previous),
    );
    if (this.averages.size > MAX_HOLD_TIME_KEYS) this.averages.delete(this.averages.keys().next().value!);
  }

  /**
   * When a busy lock is likely free, in ms: the holder's remaining lease when it is a fixed lease;
   * for a watchdog lease (remaining time above `watchdogFloorMs`, which only a renewed lock has)
   * the key's average hold time, capped by that lease; -1 when nothing is known.
   */
  estimate(key: string, remainingLeaseMs: number, watchdogFloorMs: number): number {
    if (remainingLeaseMs < 0) return -1;
    if (remainingLeaseMs <= watchdogFloorMs) return remainingLeaseMs;
    const average = this.averages.get(key);
    return average === undefined ? -1 : Math.min(Math.ceil(average), remainingLeaseMs);
  }
}
