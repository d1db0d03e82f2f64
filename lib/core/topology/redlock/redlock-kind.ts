import { quoteKey } from '../../errors/message-text';
import { LockRedisError, LockWrongTypeError } from '../../errors';
import type { Runtime } from '../../runtime/runtime';
import type { LockKindTag } from '../../kinds/key-space';
import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../kinds/lock-kind';
import type { RedisGateway } from '../../redis/redis-gateway';
import { defineScript } from '../../redis/script-library';
import { askNodes, Ballot, countVotes, failedVotes, firstError } from '../../redis/node-fanout';
import { quorumOf } from './redlock-options';
import { leaseDriftMs } from '../../runtime/lease-drift';

const FENCE_FLOOR = defineScript<[token: string, fenceTtlMs: number], number>('fence-floor');

type Granted = Extract<AttemptResult, { status: 'granted' }>;
/** A node's answer: its kind's result, or foreign data at the lock's key (a vote against, not a failure). */
type NodeAnswer = AttemptResult | { status: 'foreign'; error: LockWrongTypeError };
const isGranted = (r: NodeAnswer): r is Granted => r.status === 'granted';
const isBusy = (r: NodeAnswer): boolean => r.status === 'busy';
const isForeign = (r: NodeAnswer): r is Extract<NodeAnswer, { status: 'foreign' }> => r.status === 'foreign';

/**
 * RedLock over independent masters: runs one single-node lock kind on every node at once and
 * grants on a majority. Validity follows the Redis docs (lease − elapsed − drift, on the monotonic
 * clock); a failed attempt is released on every node that may hold it; renewals and releases count a
 * majority too. The same owner id on every node makes re-entry work node by node.
 */
export class RedlockKind implements LockKind {
  readonly tag: LockKindTag;
  readonly exclusive: boolean;
  readonly reentrant: boolean;
  private readonly quorum: number;
  private readonly fenceTtlMs: number;
  private readonly retryJitterMs: number;
  private readonly runtime: Runtime;

  constructor(
    /** The same kind, once per node, each on its node's gateway (whose timeout is the node timeout). */
    private readonly nodes: readonly LockKind[],
    private readonly gateways: readonly RedisGateway[],
    settings: {
      readonly fenceTtlMs: number;
      readonly retryJitterMs: number;
      /** The engine's clocks and randomness: validity on its monotonic clock, jitter from its source. */
      readonly runtime: Runtime;
    },
  ) {
    ({ fenceTtlMs: this.fenceTtlMs, retryJitterMs: this.retryJitterMs, runtime: this.runtime } = settings);
    const first = nodes[0]!;
    this.tag = first.tag;
    this.exclusive = first.exclusive;
    this.reentrant = first.reentrant;
    this.quorum = quorumOf(nodes.length);
  }

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const n = this.nodes.length;
    const q = this.quorum;
    const started = this.runtime.now();
    // Nodes keep the lock `drift` longer than asked. The engine counts the lease from before the
    // request, so its view ends at start + lease = start + nodeTtl − drift: the RedLock validity.
    const nodeRequest: AttemptRequest = { ...r, leaseMs: r.leaseMs + leaseDriftMs(r.leaseMs) };
    const ballot = await askNodes<LockKind, NodeAnswer>(
      this.nodes,
      (node) =>
        node.attempt(nodeRequest).catch((error: unknown) => {
          // A node that answers with foreign data at the key answered: it votes against.
          if (error instanceof LockWrongTypeError) return { status: 'foreign' as const, error };
          throw error;
        }),
      (b) =>
        countVotes(b, isGranted) >= q || countVotes(b, (v) => !isGranted(v)) >= q || failedVotes(b) > n - q,
    );
    const granted = countVotes(ballot, isGranted);
    if (granted >= q) {
      const token = Math.max(
        ...ballot.flatMap((v) => (v?.ok && isGranted(v.value) ? [v.value.fencingToken] : [])),
      );
      const fenceProblem = r.reenter ? undefined : await this.raiseFences(r, token);
      if (fenceProblem === undefined && this.runtime.now() - started < r.leaseMs) {
        return { status: 'granted', fencingToken: token, reentered: r.reenter };
      }
      // A majority was ours: the give-back frees the lock, so it wakes the waiters.
      this.giveBack(r, ballot, true);
      if (r.reenter) return { status: 'not-held' };
      return {
        status: 'busy',
        retryAfterMs: -1,
        reason: fenceProblem ?? `RedLock: the quorum answered after the lease (${r.leaseMs} ms) had run out`,
      };
    }
    this.giveBack(r, ballot, false);
    const failed = failedVotes(ballot);
    const answered = countVotes(ballot, () => true);
    if (failed > n - q) {
      throw new LockRedisError(
        `RedLock could not reach a quorum for lock ${quoteKey(r.key)}: only ${answered} of ${n} nodes answered (${q} needed)`,
        r.key,
        firstError(ballot),
      );
    }
    if (r.reenter) return { status: 'not-held' };
    const foreign = ballot.flatMap((v) => (v?.ok && isForeign(v.value) ? [v.value.error] : []));
    // Foreign data on a majority: no lock can ever be granted here; say what is in the way.
    if (foreign.length >= q) throw foreign[0]!;
    const busy = countVotes(ballot, isBusy);
    const retryAfterMs = Math.min(
      ...ballot.flatMap((v) => (v?.ok && v.value.status === 'busy' ? [v.value.retryAfterMs] : [])),
    );
    if (busy >= q) return { status: 'busy', retryAfterMs }; // plainly held by someone else
    // A split vote (racing clients each got some nodes): desynchronise before the next try.
    await new Promise<void>((resolve) =>
      this.runtime.setTimer(resolve, this.runtime.random() * this.retryJitterMs, true),
    );
    return {
      status: 'busy',
      retryAfterMs: Number.isFinite(retryAfterMs) ? retryAfterMs : -1,
      reason:
        `no quorum: ${granted} of ${n} nodes granted, ${busy} busy, ` +
        (foreign.length > 0 ? `${foreign.length} hold foreign data at the key, ` : '') +
        `${failed} did not answer (${q} needed)`,
    };
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const n = this.nodes.length;
    const q = this.quorum;
    const held = (v: ReleaseResult): boolean => v !== 'not-held';
    const ballot = await askNodes(
      this.nodes,
      (node) => node.release(h),
      (b) => countVotes(b, held) >= q,
    );
    const released = countVotes(ballot, (v) => v === 'released');
    const stillHeld = countVotes(ballot, (v) => v === 'still-held');
    if (released + stillHeld >= q) return stillHeld > released ? 'still-held' : 'released';
    const unknown = n - countVotes(ballot, () => true);
    if (released + stillHeld + unknown >= q) {
      throw new LockRedisError(
        `RedLock could not confirm the release of lock ${quoteKey(h.key)} on a quorum: ${unknown} of ${n} nodes did not answer`,
        h.key,
        firstError(ballot),
      );
    }
    return 'not-held';
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    const n = this.nodes.length;
    const q = this.quorum;
    // A lease of 0 only checks: no drift allowance is added to it.
    const nodeRequests = requests.map((r) =>
      r.leaseMs === 0 ? r : { ...r, leaseMs: r.leaseMs + leaseDriftMs(r.leaseMs) },
    );
    const allRenewed = (results: RenewResult[]): boolean => results.every((x) => x === 'renewed');
    const ballot = await askNodes(
      this.nodes,
      (node) => node.renew(nodeRequests),
      (b) => countVotes(b, allRenewed) >= q || failedVotes(b) > n - q,
    );
    if (failedVotes(ballot) > n - q) {
      throw new LockRedisError(
        `RedLock could not renew: only ${countVotes(ballot, () => true)} of ${n} nodes answered (${q} needed)`,
        undefined,
        firstError(ballot),
      );
    }
    // A lease renewed on fewer than a majority is not a lease any more: report it lost.
    const results = requests.map((_, j): RenewResult => {
      const renewed = countVotes(ballot, (v) => v[j] === 'renewed');
      if (renewed >= q) return 'renewed';
      return countVotes(ballot, (v) => v[j] === 'taken-over') > 0 ? 'taken-over' : 'gone';
    });
    // A check (lease 0) only tells; the next renewal recreates the copies (with a lease to give them).
    if (requests.some((r) => r.leaseMs > 0)) await this.recreateWhereGone(nodeRequests, ballot, results);
    return results;
  }

  /**
   * A node that restarted empty (or lost the key) while a majority still holds the lock gets it
   * back, with the same owner and holds: otherwise a second minority restart during the same hold
   * would leave fewer than a majority and lose a lock nobody else ever took. Best effort: a node that
   * fails stays without the copy until the next renewal.
   */
  private async recreateWhereGone(
    requests: readonly RenewRequest[],
    ballot: Ballot<RenewResult[]>,
    results: readonly RenewResult[],
  ): Promise<void> {
    await askNodes(this.nodes, (node, i) => {
      const vote = ballot[i];
      if (!vote?.ok) return Promise.resolve([]);
      return Promise.all(
        requests.map(async (r, j) => {
          const [base, ...nested] = r.holdIds ?? [];
          if (results[j] !== 'renewed' || base === undefined || vote.value[j] !== 'gone') return;
          if (r.leaseMs === 0) return; // a check: nothing to recreate with
          const hold = { key: r.key, names: r.names, owner: r.owner, leaseMs: r.leaseMs, options: r.options };
          const answer = await node.attempt({ ...hold, holdId: base, reenter: false });
          if (answer.status !== 'granted') return;
          for (const holdId of nested) await node.attempt({ ...hold, holdId, reenter: true });
        }),
      );
    });
  }

  /**
   * Raises the fencing counter to `token` on every node and waits for a majority: any later
   * majority shares a node with it, so its tokens start above `token`. Returns a reason on failure.
   */
  private async raiseFences(r: AttemptRequest, token: number): Promise<string | undefined> {
    const n = this.gateways.length;
    const q = this.quorum;
    const ballot = await askNodes(
      this.gateways,
      (gateway) =>
        gateway.run(FENCE_FLOOR, [r.names.fence], [String(token), this.fenceTtlMs], {
          userKey: r.key,
        }),
      (b) => countVotes(b, () => true) >= q || failedVotes(b) > n - q,
    );
    const raised = countVotes(ballot, () => true);
    return raised >= q
      ? undefined
      : `RedLock: the fencing token reached only ${raised} of ${n} nodes (${q} needed)`;
  }

  /**
   * Gives back a failed attempt on every node that may hold it, without waiting: the caller's next
   * attempt or its answer must not wait a node timeout more (waitMs bounds the call; a RedLock attempt
   * that found nodes down took up to twice the node timeout before). Each node's connection sends the
   * releases before any later command, and a release that fails is left to the lease.
   *
   * A node that may hold it: one that granted, one that failed (a reply lost or late: it may have run
   * the attempt) and one that had not answered when the ballot was decided. A node that answered busy,
   * not-held or foreign data made no hold: a release there finds nothing of this attempt's and changes
   * nothing, so none is sent. Under contention most nodes answer busy, and the give-back was half of a
   * waiter's commands (the simulator counted 2,540 token-acquire and 2,535 token-release runs in one
   * history).
   *
   * `wake` false (a minority): the give-back publishes on a channel nobody listens to. It frees nodes
   * of a lock that somebody else holds on a majority (or nobody can win this round), and the waiters
   * its grant marked are marked on that majority too: they are woken by that holder's release. Waking
   * them at the give-back sent every waiter into the same losing attempt, whose give-back woke them
   * again, at network speed for as long as the holder held (found by the simulator; docs/TEST-SUITE.md).
   * They still poll on the backoff.
   */
  private giveBack(r: AttemptRequest, ballot: Ballot<NodeAnswer>, wake: boolean): void {
    // This attempt's ids: a retry asks for a hold of its own.
    const hold: HoldRef = wake
      ? { ...r }
      : { ...r, names: { ...r.names, channel: `${r.names.channel}:give-back` } };
    this.nodes.forEach((node, i) => {
      const vote = ballot[i];
      if (vote?.ok && !isGranted(vote.value)) return; // answered without a hold
      node.release(hold).catch(() => undefined); // a failure is left to the lease
    });
  }
}
