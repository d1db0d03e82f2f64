import { ATTEMPT_MARGIN_MS } from '../../lib/core/runtime/with-deadline';
import type { CallRecord, FaultRecord, ForceReleaseCall, History, KeyClass } from './history';
import type { ScriptRun } from './sim-server';
import { SIM_ENGINE, type Scenario } from './world';

/**
 * The omniscient checker: it judges a history from true time and knows nothing of the engine's insides.
 * Each invariant is a promise of docs/GUARANTEES.md; the windows that document calls lossy (a restart
 * without persistence, a failover to a lagging replica, a holder paused past its lease) are exempt from
 * mutual exclusion, never from the fencing tokens.
 *
 * 1. exclusion: holders of one key, as each believed (grant to release() or the signal's abort), never
 *    overlap beyond what the kind allows (one; readers together; `limit` for a semaphore);
 * 2. tokens: per key, a grant that follows another (the first one's end before the second's grant)
 *    has a higher token, across restarts and failovers (a shared lock's holder the server granted
 *    first, beside the other, and whose reply came late, does not follow it: grantedAlongside);
 * 3. fencing: the storage never accepted a write from a holder whose token a later holder had passed;
 * 4. waitMs bounds the call: every call settles within waitMs + the attempt margin + the network;
 * 5. liveness: once faults stop and the servers are back, no call fails because Redis did not answer,
 *    and every call that asked in the tail is granted or busy within its bound;
 * 6. the holder learns: a grant lost to a restart without persistence or a failover is told (its signal
 *    aborts) within the table's bound after the server is back, unless it released first;
 * 7. nothing left: every call settled; after close() no timer, subscription or held lock remains.
 */
export interface Verdict {
  readonly ok: boolean;
  readonly problems: string[];
}

/** How long after its connection is back a holder must have been told of a lost lock (the table's 100 ms, plus the network). */
const TOLD_AFTER_RETURN_MS = 100 + 20;
/** How long a fair lock's queue may stall with the lock free: one waiter ttl (waiter-ttl.ts, 2.5 s by default). */
const FAIR_QUEUE_STALL_MS = 4 * 128 + 2000;

/** How long after a force release its holder must have been told (docs/CONSOLE.md's bound, plus the network). */
const FORCE_TOLD_MS = 100 + 20;

/** A release with a waiter behind it leads to a grant within this (a few round trips; the backoff reaches 128 ms). */
const WAKE_BOUND_MS = 60;
/**
 * RedLock: competing attempts can split the nodes so that none has a majority; each gives its nodes back
 * without a wake-up (redlock-kind.ts, releaseEverywhere), and the waiters retry on their backoff (its
 * cap is 128 ms). Two such rounds, and the round trips of the attempt that wins.
 */
const REDLOCK_WAKE_BOUND_MS = 2 * 128 + 44;

/** Network slack on top of a bound (two packets at most 1 ms each, a paused reply, ties). */
const NETWORK_SLACK_MS = 20;

export function check(history: History, scenario: Scenario, leftovers: string[]): Verdict {
  const problems: string[] = [...history.problems, ...leftovers];
  const grants = history.calls.filter((c) => c.outcome === 'granted' && !c.reentry);
  const lossy = history.faults.filter((f) => f.kind === 'restart-empty' || f.kind === 'failover');
  const forced = forcedReleases(history, grants, scenario);
  const grantedAt = serverGrants(history, grants, scenario);

  // 1. exclusion
  for (const key of new Set(grants.flatMap((g) => g.keys))) {
    const holders = grants.filter((g) => g.keys.includes(key));
    for (let i = 0; i < holders.length; i++) {
      const a = holders[i]!;
      const overlapping = holders.filter(
        (b, j) => j !== i && overlaps(a, b) && !exempt(a, b, lossy, history.faults, forced, grantedAt),
      );
      const conflicts = overlapping.filter((b) => conflict(a, b));
      const limit = a.keyClass === 'semaphore' ? (a.limit ?? 1) : 1;
      if (a.keyClass === 'semaphore') {
        // More than `limit` holders at one moment: check at a's grant.
        const at = a.settledAt!;
        const inside = holders.filter(
          (b) => b.settledAt! <= at && end(b) > at && !exempt(a, b, lossy, history.faults, forced, grantedAt),
        );
        if (inside.length > limit) {
          problems.push(
            `exclusion: ${inside.length} holders of semaphore ${key} (limit ${limit}) at ${at.toFixed(1)} ms: #${inside.map((b) => b.id).join(', #')}`,
          );
        }
      } else if (conflicts.length > 0) {
        const b = conflicts[0]!;
        if (a.id < b.id) {
          problems.push(
            `exclusion: #${a.id} (${a.process}, ${span(a)}) and #${b.id} (${b.process}, ${span(b)}) both held ${key}`,
          );
        }
      }
    }
  }

  // 2. tokens rise per key in grant order
  for (const key of new Set(grants.flatMap((g) => g.keys))) {
    const holders = grants.filter((g) => g.keys.includes(key)).sort((x, y) => x.settledAt! - y.settledAt!);
    for (let i = 0; i < holders.length; i++) {
      for (let j = i + 1; j < holders.length; j++) {
        const a = holders[i]!;
        const b = holders[j]!;
        if (
          end(a) <= b.settledAt! - NETWORK_SLACK_MS &&
          b.tokens![key]! <= a.tokens![key]! &&
          !grantedAlongside(b, a, grantedAt)
        ) {
          problems.push(
            `tokens: #${b.id} got ${b.tokens![key]} for ${key} at ${b.settledAt!.toFixed(1)} ms, not above #${a.id}'s ${a.tokens![key]} (held until ${end(a).toFixed(1)} ms)`,
          );
          break;
        }
      }
    }
  }

  // 3. fencing: an accepted write whose token is below one accepted before it cannot happen (the storage);
  //    a refused write must come from a holder that a later grant passed.
  for (const w of history.writes) {
    if (w.accepted) continue;
    const writer = history.calls[w.call]!;
    const passed = grants.some(
      (g) => g.keys.includes(w.key) && g.tokens![w.key]! > w.token && g.settledAt! <= w.at,
    );
    if (!passed)
      problems.push(
        `fencing: the write of #${writer.id} (token ${w.token}) to ${w.key} was refused with no later holder`,
      );
  }

  // 4. waitMs bounds the call (a paused process or a closed engine answers when it runs again)
  for (const c of history.calls) {
    if (c.settledAt === undefined) continue;
    const bound = c.waitMs + ATTEMPT_MARGIN_MS + NETWORK_SLACK_MS;
    const took = c.settledAt - c.requestedAt;
    const paused = history.faults.some(
      (f) =>
        f.kind === 'process-pause' &&
        f.target === c.process &&
        f.at < c.settledAt! &&
        f.at + (f.ms ?? 0) > c.requestedAt,
    );
    // waitMs runs on the caller's clock: a clock slower than the 0.4 % the 1 % tolerance was set for
    // stretches it in true time by as much.
    const slow = Math.max(1, 0.996 / (history.clockRates.get(c.process) ?? 1));
    // A re-entry waits for nothing, but it runs after the outer call's own grant.
    if (took > bound * 1.01 * slow && !paused) {
      problems.push(
        `waitMs: #${c.id} (${c.process}, waitMs ${c.waitMs}) settled after ${took.toFixed(1)} ms (${c.outcome})`,
      );
    }
  }

  // 5. liveness after the faults stop: the servers are back and reconnected by then
  const lastFault = Math.max(
    0,
    ...history.faults.filter((f) => f.kind !== 'close').map((f) => f.at + (f.ms ?? 0)),
  );
  const calm = lastFault + 1000;
  const closeAt = Math.min(...history.faults.filter((f) => f.kind === 'close').map((f) => f.at));
  for (const c of history.calls) {
    if (c.requestedAt < calm || c.settledAt === undefined || c.settledAt > closeAt) continue;
    if (c.outcome === 'redis-error') {
      problems.push(
        `liveness: #${c.id} (${c.process}) asked at ${c.requestedAt.toFixed(1)} ms, after the faults, and failed: ${c.error}`,
      );
    }
  }

  // 6. a holder whose lock a restart without persistence or a failover took is told
  for (const f of lossy) {
    // RedLock: one node losing a lock leaves it held on a majority (the holder keeps it, as documented).
    if (scenario.topology === 'redlock') continue;
    const back = f.at;
    for (const g of grants) {
      const told = g.lostAt ?? Infinity;
      // Held across the loss (granted before the server came back without it: its reply may reach the
      // holder after that, seed 2951) and still held after.
      if (grantedAt(g) >= back || end(g) < back) continue;
      if (!g.keys.some((k) => f.lost?.includes(k))) continue; // the server did not lose it
      // The table's bound counts from the connection coming back: the holder's process' first `up`.
      const up = history.connections.find((c) => c.process === g.process && c.state === 'up' && c.at >= back);
      if (!up || up.at >= end(g)) continue;
      // On a Cluster the check of a lock on another node that is down waits for its command timeout
      // (docs/GUARANTEES.md: "told at the check's deadline").
      const clusterWait = scenario.topology === 'cluster' ? SIM_ENGINE.commandTimeoutMs : 0;
      // The connection dropped again before the check could answer (the server killed again): the
      // check fails at its deadline, the command timeout ("a renewal that times out aborts at once").
      const downAgain = history.connections.some(
        (c) =>
          c.process === g.process &&
          c.state === 'down' &&
          c.at > up.at &&
          c.at <= up.at + TOLD_AFTER_RETURN_MS,
      );
      // Likewise when the server is under CLIENT PAUSE as the check arrives: it waits, and times out.
      const serverPaused = history.faults.some(
        (x) =>
          x.kind === 'client-pause' &&
          x.target === f.target &&
          x.at <= up.at + TOLD_AFTER_RETURN_MS &&
          x.at + (x.ms ?? 0) >= up.at,
      );
      // Likewise when the holder's own network is faulted (noise, a partition) as the check goes out: its
      // request or reply may be lost (on TCP: late), and the check fails at its deadline (seed 4543: the
      // check ran 24 ms after the return and found the hold gone, its reply lost in the noise).
      const netFaulted = networkFaulted(history, g.process, up.at, up.at + TOLD_AFTER_RETURN_MS);
      const checkWait = downAgain || serverPaused || netFaulted ? SIM_ENGINE.commandTimeoutMs : 0;
      if (
        end(g) >
        up.at + TOLD_AFTER_RETURN_MS + Math.max(clusterWait, checkWait) + pausedFor(g, history.faults, back)
      ) {
        problems.push(
          `told: #${g.id} (${g.process}) held ${g.keys.join('+')} across ${f.kind} of ${f.target} at ${back.toFixed(1)} ms and was not told within ${TOLD_AFTER_RETURN_MS} ms of its connection's return at ${up.at.toFixed(1)} ms (told ${told === Infinity ? 'never' : `at ${told.toFixed(1)}`})`,
        );
      }
    }
  }

  // 10. a force release: each holder it evicted is told within the bound (docs/CONSOLE.md: the script
  //     PUBLISHes to the holder engine's notice channel; bound 100 ms), and every grant asked for after
  //     forceRelease() answered has a token above the fence it advanced to
  for (const f of forced) {
    for (const g of f.evicted) {
      const from = Math.max(f.at, g.settledAt!);
      // A notice lost to the network (a partition, dropped messages, a server down) is not waited for,
      // nor one sent before the holder's engine listened (it subscribes once its first lock call has
      // answered), nor one of a RedLock attempt under way: a watchdog holder then learns at its next
      // renewal, a fixed-lease holder at its lease end.
      const disturbed =
        !f.surely.has(g) ||
        f.at < listeningFrom(history, g.process) ||
        noticeDisturbed(history, g.process, from, from + FORCE_TOLD_MS);
      if (disturbed && g.leaseMs !== undefined) continue;
      const bound =
        (disturbed ? SIM_ENGINE.renewEveryMs + SIM_ENGINE.commandTimeoutMs + FORCE_TOLD_MS : FORCE_TOLD_MS) +
        pausedFor(g, history.faults, from);
      if (end(g) > from + bound) {
        problems.push(
          `told: #${g.id} (${g.process}) held ${f.key} when it was force-released at ${f.at.toFixed(1)} ms and was not told within ${bound.toFixed(0)} ms (${g.lostAt === undefined ? 'never told' : `told at ${g.lostAt.toFixed(1)}: ${g.lostReason}`})`,
        );
      }
    }
    // (Only when it answered true, and for a run before that answer: a forceRelease() that timed out
    // may still run later, from the client's offline queue once the server is back.)
    const asked = f.call.result === true && f.at <= f.call.settledAt! ? f.call.settledAt! : Infinity;
    for (const g of grants) {
      if (!g.keys.includes(f.key) || g.keyClass !== f.call.keyClass || g.requestedAt <= asked) continue;
      if (g.tokens![f.key]! <= f.fence) {
        problems.push(
          `tokens: #${g.id} got ${g.tokens![f.key]} for ${f.key}, asked after the force release that advanced its fence to ${f.fence}`,
        );
      }
    }
  }

  const heldOnServer = serverHolds(history, lossy);

  // 8. busy only while held: a call answered busy overlapped some holder's hold (its belief, plus the lease
  //    Redis may keep after a loss), or a fault
  for (const c of history.calls) {
    if (c.outcome !== 'busy' || c.reentry) continue;
    // RedLock: callers racing for a free lock can split the nodes so that none has a majority (busy, no holder).
    if (c.error?.includes('no quorum')) continue;
    const from = c.requestedAt;
    const to = c.settledAt!;
    if (nearFault(history.faults, from, to)) continue;
    // A fair lock's queue may hold a caller back while the lock is free: the head it waits behind sleeps
    // up to half a waiter ttl on its directed wake-up when the holder's lease ran out unreleased
    // (docs/GUARANTEES.md, fair locks: a stalled entry holds the queue at most one waiter ttl).
    const slack = c.keyClass === 'fair' ? FAIR_QUEUE_STALL_MS : 0;
    const held = grants.some(
      (g) =>
        g.id !== c.id &&
        g.keys.some((k) => c.keys.includes(k)) &&
        // Redis may hold it from the holder's request on, before the reply reaches the holder.
        g.requestedAt <= to &&
        end(g) + leaseOf(g) + slack >= from,
    );
    // The fair lock's queue and the read-write lock's writer preference also hold a caller back for a
    // caller that waits ahead of it (the head of the queue, a waiting writer), with nobody holding.
    const waitedBehind =
      (c.keyClass === 'fair' || c.keyClass === 'read-write') &&
      history.calls.some(
        (w) =>
          w.id !== c.id &&
          w.keys.some((k) => c.keys.includes(k)) &&
          w.requestedAt < to &&
          (w.settledAt ?? Infinity) > from,
      );
    if (!held && !waitedBehind && !heldOnServer(c, from, to)) {
      problems.push(
        `busy: #${c.id} (${c.process}) found ${c.keys.join('+')} busy from ${from.toFixed(1)} to ${to.toFixed(1)} ms while nobody held it`,
      );
    }
  }

  const firstClose = Math.min(...history.faults.filter((f) => f.kind === 'close').map((f) => f.at));
  // 9. wake-ups: with no fault about, a release with a waiter behind it is followed by a grant within
  //    the pub/sub round trips, not the backoff (the safety net for lost messages)
  const wakeBound = scenario.topology === 'redlock' ? REDLOCK_WAKE_BOUND_MS : WAKE_BOUND_MS;
  // The mutex releases, once: the scans below run for every waiter of every release.
  const mutexReleases = history.runs.filter((run) => run.script === 'mutex-release');
  for (const r of grants) {
    // The mutex and the token lock: their releases wake every waiter (the fair lock wakes its queue's head,
    // shared kinds wake whoever fits). A multi-key waiter waits for its busiest key, not this one.
    if (
      r.releasedAt === undefined ||
      r.releaseResult !== true ||
      (r.keyClass !== 'mutex' && r.keyClass !== 'token')
    )
      continue;
    const t = r.releasedAt;
    if (nearFault(history.faults, t - 300, t + wakeBound)) continue;
    // From the first close() on, a grant may go to a process that gives it back unreported.
    if (t + wakeBound >= firstClose) continue;
    for (const key of r.keys) {
      const tag = `{${key}}`;
      // A cohort that ended at its bound lets the other processes go first: its own waiters hold back
      // for the yield time (mutex-release.lua's ARGV[6] and ARGV[7]).
      const yielding = (w: CallRecord): boolean =>
        mutexReleases.some(
          (run) =>
            run.keys[0]!.includes(tag) &&
            run.args[5] === history.engineIds.get(w.process) &&
            run.at <= t &&
            run.at >= t - Number(run.args[6] ?? 0) - 5,
        );
      const waiting = history.calls.some(
        (w) =>
          !w.reentry &&
          w.keys.length === 1 &&
          w.keys[0] === key &&
          w.process !== r.process &&
          w.requestedAt < t - 5 &&
          (w.settledAt ?? Infinity) > t + wakeBound &&
          w.requestedAt + w.waitMs > t + wakeBound + 50 &&
          !yielding(w),
      );
      if (!waiting) continue;
      // A cohort that ended at its bound reserves the lock for the longest-waiting process for a moment
      // (mutex-release.lua's ARGV[6]): a release that did so may be followed by no grant for that moment.
      const reserved = mutexReleases.some(
        (run) => run.keys[0]!.includes(tag) && run.at >= t - 5 && run.at <= t && (run.args[5] ?? '') !== '',
      );
      if (reserved) continue;
      const next = grants.some(
        (g) =>
          g.keys.includes(key) &&
          g.id !== r.id &&
          g.settledAt! > t - NETWORK_SLACK_MS &&
          g.settledAt! <= t + wakeBound,
      );
      if (!next) {
        problems.push(
          `wake-up: #${r.id} released ${key} at ${t.toFixed(1)} ms with a waiter behind it, and nobody was granted within ${wakeBound} ms`,
        );
      }
    }
  }

  // 7. every call settled
  for (const c of history.calls) {
    if (c.settledAt === undefined) problems.push(`settled: #${c.id} (${c.process}) never settled`);
  }
  return { ok: problems.length === 0, problems };
}

function end(c: CallRecord): number {
  return Math.min(c.endedAt ?? Infinity, c.lostAt ?? Infinity, c.releasedAt ?? Infinity);
}

/** The lease Redis may keep a lock after its holder stopped believing in it. */
function leaseOf(c: CallRecord): number {
  return (c.leaseMs ?? 900) + 50;
}

/** Whether any fault (but close) was in force between `from` and `to`, with a margin for its effects. */
function nearFault(faults: readonly FaultRecord[], from: number, to: number): boolean {
  return faults.some((f) => f.kind !== 'close' && f.at - 1500 <= to && f.at + (f.ms ?? 0) + 1500 >= from);
}

/**
 * What Redis held of a key for no grant of the history, from the servers' runs, as windows of true time
 * per user key: `(c, from, to)` says whether one of them, of a process other than c's, made c busy.
 * - A multi-key round's group (multi-acquire) taken and given back when a later group was busy
 *   (docs/ARCHITECTURE.md, "Several keys at once": never wait while holding some): from the run to the
 *   release of that hold (else its lease). Seed 5703: a Cluster round held `mutex:a` 4 ms.
 * - A waiting place nobody took out: a fair queue entry or a read-write writer marker whose owner's
 *   abandon never ran (the call had given up; its place was set by an attempt that ran after, and the
 *   abandon sent behind it was lost). To Redis it is a waiter that died: docs/GUARANTEES.md, "Read-write
 *   locks, fair locks and semaphores": it "keeps its place until its deadline (≈ 2.5 s by default, server
 *   clock) and is then skipped". From the run to the deadline it set (its waiter ttl), or to the next
 *   run of the same owner on the key (which refreshes, takes or gives up the place). Seeds 5163, 6781.
 * A restart without persistence or a failover ends every window (the place may be gone with it).
 */
function serverHolds(
  history: History,
  lossy: readonly FaultRecord[],
): (c: CallRecord, from: number, to: number) => boolean {
  const windows = new Map<string, { engine: string; from: number; to: number; classes: KeyClass[] }[]>();
  const cut = (at: number, to: number): number =>
    Math.min(to, ...lossy.filter((f) => f.at > at).map((f) => f.at));
  const add = (key: string, owner: string, from: number, to: number, classes: KeyClass[]): void => {
    const list = windows.get(key) ?? [];
    list.push({ engine: owner.split('.')[0]!, from, to: cut(from, to), classes });
    windows.set(key, list);
  };
  // The runs on each Redis key (by the script's first key), in time order: what ends a window is a run
  // on the same key after it.
  const byKey = new Map<string, ScriptRun[]>();
  for (const r of history.runs) {
    const list = byKey.get(r.keys[0]!);
    if (list) list.push(r);
    else byKey.set(r.keys[0]!, [r]);
  }
  const firstAfter = (list: readonly ScriptRun[], at: number): number => {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.at <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  history.runs.forEach((r) => {
    const reply = Array.isArray(r.reply) ? (r.reply as unknown[]) : undefined;
    const owner = r.args[0];
    if (!reply || owner === undefined) return;
    const later = (accept: (n: ScriptRun) => boolean, on = r.keys[0]!): number => {
      const list = byKey.get(on) ?? [];
      for (let j = firstAfter(list, r.at); j < list.length; j++) if (accept(list[j]!)) return list[j]!.at;
      return Infinity;
    };
    if (r.script === 'multi-acquire' && reply[0] === 1) {
      const holdId = r.args[1];
      for (const lock of r.keys.filter((k) => k.endsWith(':m'))) {
        const key = userKeyOf(lock);
        if (key === undefined) continue;
        const released = later(
          (n) =>
            n.args[0] === owner &&
            ((n.script === 'mutex-release' && n.args[1] === holdId) || n.script === 'token-release'),
          lock,
        );
        add(key, owner, r.at, Math.min(released, r.at + Number(r.args[2])), ['mutex', 'token']);
      }
      return;
    }
    if (reply[0] !== 0) return;
    const key = userKeyOf(r.keys[0]!);
    if (key === undefined) return;
    if (r.script === 'fair-acquire') {
      const entry = r.args[9] !== undefined && r.args[9] !== '' ? r.args[9] : owner;
      const next = later(
        (n) =>
          (n.script === 'fair-acquire' && (n.args[9] || n.args[0]) === entry) ||
          (n.script === 'fair-abandon' && n.args[0] === entry),
      );
      add(key, entry, r.at, Math.min(next, r.at + Number(r.args[5])), ['fair']);
    } else if (r.script === 'read-write-acquire' && r.args[2] === 'w' && Number(reply[1]) >= 0) {
      // A writer refused while the lock is held leaves the writer-waiting marker (read-write-acquire.lua).
      const next = later(
        (n) =>
          (n.script === 'read-write-acquire' || n.script === 'read-write-abandon') && n.args[0] === owner,
      );
      add(key, owner, r.at, Math.min(next, r.at + Number(r.args[6])), ['read-write']);
    }
  });
  return (c, from, to) => {
    const engine = history.engineIds.get(c.process);
    return c.keys.some((k) =>
      (windows.get(k) ?? []).some(
        (w) =>
          w.engine !== engine &&
          w.classes.includes(c.keyClass) &&
          // The writer marker holds back new readers only; writers compete when the lock frees.
          (c.keyClass !== 'read-write' || c.mode === 'read') &&
          w.from <= to &&
          w.to >= from,
      ),
    );
  };
}

/** The user's key a Redis key of the lock scripts names (its hash tag, `{key}`), if it has one. */
function userKeyOf(redisKey: string): string | undefined {
  return /\{([^}]*)\}/.exec(redisKey)?.[1];
}

function span(c: CallRecord): string {
  return `${c.settledAt!.toFixed(1)}–${end(c) === Infinity ? '…' : end(c).toFixed(1)} ms`;
}

function overlaps(a: CallRecord, b: CallRecord): boolean {
  return a.settledAt! < end(b) && b.settledAt! < end(a);
}

/** Whether two holders of one key may not overlap: writers exclude everyone; readers share. */
function conflict(a: CallRecord, b: CallRecord): boolean {
  if (a.keyClass === 'read-write') return a.mode === 'write' || b.mode === 'write';
  return a.process !== b.process || a.id !== b.id;
}

/**
 * Overlaps the documented lossy cases explain: the earlier holder's lock was lost by a restart without
 * persistence or a failover to a replica without it, between the server's grant of the first and the
 * second grant; or a holder was paused (GC, SIGSTOP) while it held.
 */
function exempt(
  a: CallRecord,
  b: CallRecord,
  lossy: readonly FaultRecord[],
  faults: readonly FaultRecord[],
  forced: readonly ForcedRelease[],
  grantedAt: (c: CallRecord) => number,
): boolean {
  const [first, second] = a.settledAt! <= b.settledAt! ? [a, b] : [b, a];
  // A force release takes the lock from its holders on purpose: exclusion is not kept for the rest of
  // an evicted holder's section (the rule "told" bounds how long it may go on believing).
  // (Two holders it surely evicted held together before it: that overlap is judged as any other.)
  const maybe = (f: ForcedRelease, c: CallRecord): boolean => f.evicted.has(c) && !f.surely.has(c);
  if (forced.some((f) => f.evicted.has(a) !== f.evicted.has(b) || maybe(f, a) || maybe(f, b))) return true;
  // From the server's grant: its reply can reach the holder after a restart that already lost it.
  const lostBetween = lossy.some(
    (f) =>
      f.at >= grantedAt(first) &&
      f.at <= second.settledAt! &&
      // A shared kind is one lock per key with a holder each: a replica can keep the lock and miss a holder.
      (shared(first) || first.keys.some((k) => f.lost?.includes(k) || f.shortened?.includes(k))),
  );
  if (lostBetween) return true;
  // A holder whose process was paused (GC, SIGSTOP) while it held: "a holder that pauses past its lease".
  return [a, b].some((c) =>
    faults.some(
      (f) =>
        f.kind === 'process-pause' &&
        f.target === c.process &&
        f.at < end(c) &&
        f.at + (f.ms ?? 0) > c.requestedAt,
    ),
  );
}

/**
 * Whether `b`, heard of after `a` ended, was in truth granted before `a` and held beside it: holders a
 * shared lock lets in together (readers, permits), `b` granted first by the server, and its lease there
 * still running when its holder heard of the grant (a reply its process read late: seed 4895, a reader
 * granted at 1,495.0 ms whose process was paused until 2,209.2 ms; another reader was granted at
 * 1,514.3 ms with a higher token and released meanwhile). Tokens rise in the server's grant order
 * (docs/GUARANTEES.md, the row "Fencing tokens strictly increase per lock", and "One key, one lock per
 * kind": a reader's or a permit's token orders grants, it proves no exclusive access), so `b`'s is below
 * `a`'s. Not a writer or a mutex (`a` could not have been granted beside it), nor a grant whose lease ran
 * out before its holder heard of it (seeds 2018 and 2326: the engine gives such a grant back).
 */
function grantedAlongside(b: CallRecord, a: CallRecord, grantedAt: (c: CallRecord) => number): boolean {
  const together =
    (b.keyClass === 'semaphore' && a.keyClass === 'semaphore') ||
    (b.keyClass === 'read-write' && a.keyClass === 'read-write' && b.mode === 'read' && a.mode === 'read');
  if (!together) return false;
  const from = grantedAt(b);
  return from < grantedAt(a) && from + (b.leaseMs ?? SIM_ENGINE.watchdogLeaseMs) > b.settledAt!;
}

function shared(c: CallRecord): boolean {
  return c.keyClass === 'semaphore' || c.keyClass === 'read-write';
}

function pausedFor(c: CallRecord, faults: readonly FaultRecord[], after: number): number {
  return faults
    .filter((f) => f.kind === 'process-pause' && f.target === c.process && f.at + (f.ms ?? 0) > after - 1000)
    .reduce((sum, f) => sum + (f.ms ?? 0), 0);
}

/** A force release that evicted something, as the servers ran it. */
interface ForcedRelease {
  readonly call: ForceReleaseCall;
  readonly key: string;
  /** When the (first) server ran the script. */
  readonly at: number;
  /** The fence it advanced the key to (RedLock: the lowest node's): every grant after it has a higher token. */
  readonly fence: number;
  /**
   * The holders it may have evicted: those that believed they held at its first run, those whose grant
   * was on its way back (a lower token), and on RedLock those whose attempt ran while it did (it runs
   * node by node, and an attempt can keep a minority of nodes it believes a majority).
   */
  readonly evicted: ReadonlySet<CallRecord>;
  /** Of those, the ones it certainly evicted (all but RedLock's attempts under way). */
  readonly surely: ReadonlySet<CallRecord>;
}

/**
 * Whether the network could keep a notice from `process` between `from` and `to`: a fault of its own
 * (a partition, noise), or its connection down then, or back only just before (it resubscribes).
 */
function noticeDisturbed(history: History, process: string, from: number, to: number): boolean {
  if (faultOn(history, process, from, to)) return true;
  const events = history.connections.filter((c) => c.process === process);
  const before = events.filter((c) => c.at <= from).at(-1);
  if (before && (before.state === 'down' || before.at >= from - NETWORK_SLACK_MS)) return true;
  return events.some((c) => c.state === 'down' && c.at > from && c.at <= to);
}

/** Whether the network of `process` (noise, a partition of it) was faulted between `from` and `to`. */
function networkFaulted(history: History, process: string, from: number, to: number): boolean {
  return faultOn(history, process, from, to, (f) => f.kind === 'network-noise' || f.kind === 'partition');
}

/**
 * Whether a fault aimed at `process` (or one of its connections, `<process>/…`) and passing `only`
 * was in force between `from` and `to` (NETWORK_SLACK_MS before `from` counted).
 */
function faultOn(
  history: History,
  process: string,
  from: number,
  to: number,
  only: (f: FaultRecord) => boolean = () => true,
): boolean {
  return history.faults.some(
    (f) =>
      only(f) &&
      (f.target === process || f.target.startsWith(`${process}/`)) &&
      f.at <= to &&
      f.at + (f.ms ?? 0) >= from - NETWORK_SLACK_MS,
  );
}

/** From when a process hears force-release notices: its engine subscribes once its first call answered. */
function listeningFrom(history: History, process: string): number {
  const first = Math.min(
    ...history.calls
      .filter((c) => c.process === process && c.settledAt !== undefined)
      .map((c) => c.settledAt!),
  );
  return first + NETWORK_SLACK_MS;
}

function forcedReleases(
  history: History,
  grants: readonly CallRecord[],
  scenario: Scenario,
): ForcedRelease[] {
  return history.forceReleases.flatMap((call) => {
    // Its script runs after the call, and before the next force release of the key: a call that timed
    // out (the server down) may still run it once the server is back, from the client's offline queue.
    const next = Math.min(
      ...history.forceReleases.filter((c) => c.key === call.key && c.at > call.at).map((c) => c.at),
    );
    const runs = history.runs.filter(
      (r) =>
        r.script === 'force-release' &&
        r.keys[0]!.includes(`{${call.key}}`) &&
        r.at >= call.at &&
        r.at < next &&
        Array.isArray(r.reply) &&
        r.reply[0] === 1,
    );
    if (runs.length === 0) return [];
    // One server per key: each run is one eviction, at its own time and with its own fence. Two force
    // releases of a key can be on their way at once, and the earlier one's run can land after the later
    // call was made (seed 2424: runs 156 ms apart, the second evicting a reader granted between them).
    if (scenario.topology !== 'redlock') return runs.map((r) => evictions(history, call, [r], grants, false));
    return [evictions(history, call, runs, grants, true)];
  });
}

/** The holders the force release `call` evicted in its `runs` (one per node it ran on). */
function evictions(
  history: History,
  call: ForceReleaseCall,
  runs: readonly ScriptRun[],
  grants: readonly CallRecord[],
  redlock: boolean,
): ForcedRelease {
  const at = Math.min(...runs.map((r) => r.at));
  // RedLock: each node advanced its own counter (server clocks apart); a grant after the force
  // release is above the lowest of them.
  const fence = Math.min(...runs.map((r) => Number((r.reply as unknown[])[1])));
  const last = Math.max(...runs.map((r) => r.at));
  const holders = grants.filter(
    (g) => g.keys.includes(call.key) && g.keyClass === call.keyClass && end(g) > at,
  );
  const surely = holders.filter((g) => g.settledAt! <= at || g.tokens![call.key]! < fence);
  // RedLock: a grant whose winning attempt was under way across the force release may have lost the
  // holds it had taken before it on some nodes. An attempt that began after the last force-release
  // run lost nothing, however long its call had waited before it (seed 1392), nor one that won each
  // of its nodes only after the force release had run there (seed 3387).
  const maybe = redlock
    ? holders.filter(
        (g) =>
          g.requestedAt < last && g.settledAt! > at && winningAttemptHeldBefore(history, g, call.key, runs),
      )
    : [];
  return { call, key: call.key, at, fence, evicted: new Set([...surely, ...maybe]), surely: new Set(surely) };
}

/**
 * Whether a RedLock grant's winning attempt held a node when a force-release run reached it: the
 * grant's token is the highest one its nodes granted, so the acquire runs that granted it name the
 * attempt (each attempt asks for a hold of its own), and a run on a node evicts the attempt's hold
 * there only when the attempt's acquire granted on that node before it (in the servers' order of
 * runs). True when no run matches (taken as under way).
 */
function winningAttemptHeldBefore(
  history: History,
  g: CallRecord,
  key: string,
  forceRuns: readonly ScriptRun[],
): boolean {
  const token = g.tokens?.[key];
  const scoped = `{${key}}`;
  const granting = (r: ScriptRun): boolean =>
    r.script.endsWith('-acquire') &&
    r.keys[0]!.includes(scoped) &&
    Array.isArray(r.reply) &&
    r.reply[0] === 1;
  const holds = new Set(
    history.runs.filter((r) => granting(r) && Number((r.reply as unknown[])[1]) === token).map(attemptOf),
  );
  if (holds.size === 0) return true;
  const forced = new Set(forceRuns);
  const won = new Set<string>(); // the nodes the attempt holds so far, in the servers' order of runs
  for (const r of history.runs) {
    if (forced.has(r) && won.has(r.server)) return true;
    if (granting(r) && holds.has(attemptOf(r))) won.add(r.server);
  }
  return false;
}

/**
 * What names an acquire's attempt: the mutex's hold id (ARGV[2]); the token lock has no hold id, and
 * its per-attempt owner token (ARGV[1]) is the value it sets. Its ARGV[2] is the lease, which every
 * attempt of the same lease shares (seed 3296: a grant won by an attempt begun 184 ms after a force
 * release was dated to the caller's first attempt with that lease, 855 ms before it).
 */
function attemptOf(r: ScriptRun): unknown {
  return r.script === 'token-acquire' ? r.args[0] : r.args[1];
}

/**
 * When the server granted each holder (true time), as a function: the acquire run that answered the
 * grant's token (the latest one, on the key's server), else the reply's arrival (a cohort's hand-off of
 * a reserved token, a multi-key grant, RedLock: a grant is a majority of nodes, judged by its reply).
 * A reply late on the network reaches its holder after a restart without persistence or a failover
 * that already lost the lock (seed 2951: granted 7 ms before the restart, heard 17 ms after it);
 * docs/GUARANTEES.md counts that lock lost to the restart, and its holder is told on return.
 */
function serverGrants(
  history: History,
  grants: readonly CallRecord[],
  scenario: Scenario,
): (c: CallRecord) => number {
  const at = new Map<CallRecord, number>();
  if (scenario.topology === 'redlock') return (c) => c.settledAt!;
  const runs = new Map<string, number>();
  for (const r of history.runs) {
    if (!r.script.endsWith('-acquire') || !Array.isArray(r.reply) || r.reply[0] !== 1) continue;
    const key = userKeyOf(r.keys[0]!);
    if (key !== undefined) runs.set(`${key} ${Number(r.reply[1])}`, r.at);
  }
  for (const g of grants) {
    const times = g.keys.map((k) => runs.get(`${k} ${g.tokens![k]}`));
    const ran = times.every((t) => t !== undefined) ? Math.max(...(times as number[])) : undefined;
    at.set(g, ran !== undefined && ran <= g.settledAt! ? ran : g.settledAt!);
  }
  return (c) => at.get(c) ?? c.settledAt!;
}
