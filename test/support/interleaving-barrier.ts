/**
 * Stands in for the seckill critical section's pause to force the interleaving a race needs,
 * deterministically: each caller waits until `parties` callers are inside at once (or until
 * `timeoutMs`, so a serialised caller is not stuck forever). `peakInside` then tells how many
 * purchases were between their read and their write at the same moment.
 */
export class InterleavingBarrier {
  /** Most callers ever inside wait() at once. */
  peakInside = 0;
  /** Callers released by the timeout rather than by a full barrier. */
  timedOut = 0;
  private inside = 0;
  private waiting: Array<() => void> = [];

  constructor(
    private readonly parties: number,
    private readonly timeoutMs: number,
  ) {}

  /** Same signature as CriticalPause#wait. */
  async wait(_itemId: string): Promise<void> {
    this.inside++;
    this.peakInside = Math.max(this.peakInside, this.inside);
    try {
      if (this.waiting.length + 1 >= this.parties) {
        const released = this.waiting;
        this.waiting = [];
        released.forEach((release) => release());
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.waiting = this.waiting.filter((w) => w !== release);
          this.timedOut++;
          resolve();
        }, this.timeoutMs);
        const release = (): void => {
          clearTimeout(timer);
          resolve();
        };
        this.waiting.push(release);
      });
    } finally {
      this.inside--;
    }
  }
}
