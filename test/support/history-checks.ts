/*
 * What the specs that run history workers (workers/history-worker.ts) share: stopping the workers and
 * gathering their histories, and the checks that must hold whatever the fault (a restart without
 * persistence, a Sentinel failover): fencing tokens per key in grant order, and fenced writes accepted in
 * token order. Used by test/faults/timing/holder-history.spec.ts and test/faults/sentinel-failovers.spec.ts.
 */
import type { WorkerProcess } from './spawn-worker';
import type { HistoryEvent, HistoryMessage } from './workers/history-protocol';

/** One event of a history, with the name of the process it happened in. */
export type Recorded<T extends HistoryEvent['type'] = HistoryEvent['type']> = Extract<
  HistoryEvent,
  { type: T }
> & { process: string };

/** Stops the workers' loops (a waiting acquire aborted, a hold cut short) and gathers every event. */
export async function collectHistories(
  workers: readonly WorkerProcess<HistoryMessage>[],
): Promise<Recorded[]> {
  for (const w of workers) w.send({ type: 'stop' });
  const histories = await Promise.all(
    workers.map((w) =>
      w.waitForMessage<Extract<HistoryMessage, { type: 'history' }>>((m) => m.type === 'history', 20_000),
    ),
  );
  return histories.flatMap((h) => h.events.map((e) => ({ ...e, process: h.process })));
}

/** Closes a worker's engine and oracle connection, then ends the process. */
export async function stopHistoryWorker(worker: WorkerProcess<HistoryMessage>): Promise<void> {
  if (worker.running) {
    worker.send({ type: 'close' });
    await worker.waitForMessage((m) => m.type === 'closed', 10_000).catch(() => undefined);
  }
  await worker.stop(2_000);
}

/** The events of one type. */
export function eventsOf<T extends HistoryEvent['type']>(
  events: readonly Recorded[],
  type: T,
): Recorded<T>[] {
  return events.filter((e): e is Recorded<T> => e.type === type);
}

/**
 * Each grant whose token is not above the one of the grant of its key before it. `grants` are in grant
 * order; `describe` names a grant in the message.
 */
export function tokenRegressions<G extends { key: string; token: number }>(
  grants: readonly G[],
  describe: (grant: G) => string,
): string[] {
  const last = new Map<string, G>();
  const regressions: string[] = [];
  for (const grant of grants) {
    const prev = last.get(grant.key);
    if (prev && grant.token <= prev.token)
      regressions.push(`${grant.key}: ${describe(grant)} after ${describe(prev)}`);
    last.set(grant.key, grant);
  }
  return regressions;
}

/**
 * Per resource, what the fencing oracle must never have done: refuse a write whose token was not stale
 * (below a token it had accepted), or accept a token no greater than one it had accepted before.
 */
export function fenceViolations(writes: readonly Recorded<'write'>[]): string[] {
  const violations: string[] = [];
  for (const resource of [...new Set(writes.map((w) => w.resource))].sort()) {
    const mine = writes.filter((w) => w.resource === resource);
    const accepted = mine.filter((w) => w.accepted);
    const acceptedTokens = new Set(accepted.map((w) => w.token));
    for (const w of mine.filter((x) => !x.accepted)) {
      if (!(w.last > w.token && acceptedTokens.has(w.last)))
        violations.push(`${resource}: #${w.token} refused, the oracle's last being #${w.last}`);
    }
    for (const a of accepted) {
      for (const b of accepted) {
        if (a.doneAt < b.at && b.token <= a.token)
          violations.push(`${resource}: #${b.token} accepted after #${a.token} was`);
      }
    }
  }
  return violations;
}
