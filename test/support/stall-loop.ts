/**
 * Blocks this process' event loop for `ms`: the app's synchronous work, a long GC pause or a starved
 * CPU, as the event loop sees them (nothing else of this process runs meanwhile).
 */
export function stallLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}
