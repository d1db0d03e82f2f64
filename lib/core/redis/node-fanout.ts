/** What one node said: a value, or the error it failed with (timeouts included). */
export type Vote<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The answers so far, by node index; `undefined` while that node has not answered. */
export type Ballot<T> = ReadonlyArray<Vote<T> | undefined>;

/**
 * THE one way to ask several nodes (RedLock's votes, inspection's reads, the registry's writes, PING
 * of every node, subscriptions on every node): asks every node at once and resolves as soon as
 * `decided(ballot)` says the outcome can no longer change, or every node answered. Nodes still
 * pending keep running: their commands stay queued in order on their own connections, so a later
 * release on the same node always runs after them. Callers bound each call (a gateway's per-node
 * timeout, a deadline), so this always settles. It never rejects: failures are votes.
 */
export function askNodes<N, T>(
  nodes: readonly N[],
  ask: (node: N, index: number) => Promise<T>,
  decided: (ballot: Ballot<T>) => boolean = () => false,
): Promise<Ballot<T>> {
  return new Promise((resolve) => {
    const count = nodes.length;
    const ballot: (Vote<T> | undefined)[] = new Array(count).fill(undefined);
    if (count === 0) return resolve([]);
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
    nodes.forEach((node, i) => {
      let call: Promise<T>;
      try {
        call = ask(node, i);
      } catch (error) {
        call = Promise.reject(error);
      }
      call.then(
        (value) => record(i, { ok: true, value }),
        (error: unknown) => record(i, { ok: false, error }),
      );
    });
  });
}

/** The values of the nodes that answered, in node order. */
export function answers<T>(ballot: Ballot<T>): T[] {
  return ballot.flatMap((v) => (v?.ok ? [v.value] : []));
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
