/**
 * Calls `onAbort` once when the caller's signal or the engine's `closing` aborts (at once when one
 * already has); the function returned stops watching. A waiter watches both for as long as it waits
 * and ends whichever wait it is in when told (Waiter.interrupt).
 *
 * Node's AbortSignal keeps its listeners in a list that every add and remove walks, so one listener
 * per waiter on one long-lived signal (the engine's `closing`, or a signal a caller shares between
 * many calls) makes a flood of waiters quadratic and trips MaxListenersExceededWarning. Instead each
 * source signal gets a single listener that fans out to a Set of waiters' callbacks: watching and
 * unwatching cost O(1), whatever the number of waiters, and no AbortController is built per waiter
 * (one was 6-7 µs of every contended acquisition: createAbortSignal; issue 46).
 */
export function watchAborts(a: AbortSignal | undefined, b: AbortSignal, onAbort: () => void): () => void {
  if (a?.aborted || b.aborted) {
    onAbort();
    return () => undefined;
  }
  join(b, onAbort);
  if (a) join(a, onAbort);
  return () => {
    leave(b, onAbort);
    if (a) leave(a, onAbort);
  };
}

/** The callbacks a source signal calls, behind the one listener this module adds to it. */
interface FanOut {
  readonly members: Set<() => void>;
  readonly onAbort: () => void;
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

// The listener is added when the first waiter joins and removed when the last leaves, so a
// signal nobody waits on carries no listener of ours (the churn test checks it).
function join(signal: AbortSignal, member: () => void): void {
  let group = fanOuts.get(signal);
  if (!group) {
    const members = new Set<() => void>();
    const onAbort = () => {
      fanOuts.delete(signal);
      const told = [...members];
      members.clear();
      for (const tell of told) tell();
    };
    group = { members, onAbort };
    fanOuts.set(signal, group);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  group.members.add(member);
}

function leave(signal: AbortSignal, member: () => void): void {
  const group = fanOuts.get(signal);
  if (!group || !group.members.delete(member) || group.members.size > 0) return;
  fanOuts.delete(signal);
  signal.removeEventListener('abort', group.onAbort);
}
