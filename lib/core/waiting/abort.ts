/**
 * One signal per waiter that aborts when the caller's signal or the engine's `closing` does.
 *
 * Node's AbortSignal keeps its listeners in a list that every add and remove walks, so one listener
 * per waiter on one long-lived signal (the engine's `closing`, or a signal a caller shares between
 * many calls) makes a flood of waiters quadratic and trips MaxListenersExceededWarning. Instead each
 * source signal gets a single listener that fans out to a Set of waiters' controllers: linking and
 * unlinking a waiter cost O(1), whatever the number of waiters.
 */
export function linkSignals(
  a: AbortSignal | undefined,
  b: AbortSignal,
): { signal: AbortSignal; unlink: () => void } {
  const controller = new AbortController();
  const sources = a ? [a, b] : [b];
  for (const s of sources) {
    if (s.aborted) {
      controller.abort(s.reason);
      return { signal: controller.signal, unlink: () => undefined };
    }
  }
  for (const s of sources) join(s, controller);
  return {
    signal: controller.signal,
    unlink: () => {
      for (const s of sources) leave(s, controller);
    },
  };
}

/** The controllers a source signal aborts, behind the one listener this module adds to it. */
interface FanOut {
  readonly members: Set<AbortController>;
  readonly onAbort: () => void;
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

// The listener is added when the first waiter joins and removed when the last leaves, so a
// signal nobody waits on carries no listener of ours (the churn test checks it).
function join(signal: AbortSignal, controller: AbortController): void {
  let group = fanOuts.get(signal);
  if (!group) {
    const members = new Set<AbortController>();
    const onAbort = () => {
      fanOuts.delete(signal);
      for (const member of [...members]) member.abort(signal.reason);
      members.clear();
    };
    group = { members, onAbort };
    fanOuts.set(signal, group);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  group.members.add(controller);
}

function leave(signal: AbortSignal, controller: AbortController): void {
  const group = fanOuts.get(signal);
  if (!group || !group.members.delete(controller) || group.members.size > 0) return;
  fanOuts.delete(signal);
  signal.removeEventListener('abort', group.onAbort);
}
