/**
 * One signal that aborts when either input does, with the listeners removed by `unlink()`
 * (AbortSignal.any keeps them alive on long-lived signals, which churn tests show as a leak).
 */
export function linkSignals(
  a: AbortSignal | undefined,
  b: AbortSignal,
): { signal: AbortSignal; unlink: () => void } {
  const controller = new AbortController();
  const sources = a ? [a, b] : [b];
  const onAbort = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const s of sources) {
    if (s.aborted) {
      controller.abort(s.reason);
      return { signal: controller.signal, unlink: () => undefined };
    }
  }
  for (const s of sources) s.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    unlink: () => {
      for (const s of sources) s.removeEventListener('abort', onAbort);
    },
  };
}
