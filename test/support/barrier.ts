/** A gate a test opens by hand: code awaiting `wait()` resumes at `open()`; `entered` counts arrivals. */
export class Barrier {
  entered = 0;
  private release!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  /** Records an arrival and waits until the gate opens. */
  async wait(): Promise<void> {
    this.entered++;
    await this.gate;
  }

  /** Opens the gate for every waiter, now and later. */
  open(): void {
    this.release();
  }
}

/** Tracks whether a promise has settled, without awaiting it. */
export function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false;
  const settle = () => {
    done = true;
  };
  promise.then(settle, settle);
  return { promise, settled: () => done };
}
