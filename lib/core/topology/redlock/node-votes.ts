/** What one node said: a value, or the error it failed with (timeouts included). */
export type Vote<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The votes so far, by node index; `undefined` while that node has not answered. */
export type Ballot<T> = ReadonlyArray<Vote<T> | undefined>;

/**
 * Asks every node at once and resolves as soon as `decided(ballot)` says the outcome can no longer
 * change (or every node answered). Nodes still pending keep running: their commands stay queued in
 * order on their own connections, so a later release on the same node always runs after them.
 * Each call is bounded by its gateway's per-node timeout, so this always settles.
 */
export function collectVotes<T>(
  count: number,
  ask: (index: number) => Promise<T>,
  decided: (ballot: Ballot<T>) => boolean = () => false,
): Promise<Ballot<T>> {
  return new Promise((resolve) => {
    const ballot: (Vote<T> | undefined)[] = new Array(count).fill(undefined);
    let answered = 0;
    let done = false;
    const record = (index: number, vote: Vote<T>): void => {
      ballot[index] = vote;
      answered++;
      if (done) return;
      if (answered === count || decided(ballot)) {
        done = true;
        resolve([...ballot]);
      }
    };
    for (let i = 0; i < count; i++) {
      let call: Promise<T>;
      try {
        call = ask(i);
      } catch (error) {
        call = Promise.reject(error);
      }
      call.then(
        (value) => record(i, { ok: true, value }),
        (error: unknown) => record(i, { ok: false, error }),
      );
    }
  });
}

/** Counts the votes matching `test`. */
export function countVotes<T>(ballot: Ballot<T>, test: (value: T) => boolean): number {
  return ballot.reduce((n, v) => (v?.ok && test(v.value) ? n + 1 : n), 0);
}

/** Number of nodes that failed (error or timeout). */
export function failedVotes<T>(ballot: Ballot<T>): number {
  return ballot.reduce((n, v) => (v && !v.ok ? n + 1 : n), 0);
}

/** The first error among the votes, to keep as a `cause`. */
export function firstError<T>(ballot: Ballot<T>): unknown {
  for (const v of ballot) if (v && !v.ok) return v.error;
  return undefined;
}
