import { answers, askNodes, firstError } from '../redis/node-fanout';
import type { RedisGateway } from '../redis/redis-gateway';
import type { InspectionTarget } from './inspection-target';
import type { KindState, RawHolder } from './lock-state';
import type { LockKind } from '../options/lock-info';

/**
 * Runs `fn` on every node of `target`; resolves with the answers once at least `needed` (default:
 * the quorum) answered, else rejects with the first error.
 */
export async function onNodes<T>(
  target: InspectionTarget,
  fn: (gateway: RedisGateway) => Promise<T>,
  needed = target.quorum,
): Promise<T[]> {
  const ballot = await askNodes(target.gateways, (gateway) => fn(gateway));
  const ok = answers(ballot);
  if (ok.length >= needed) return ok;
  throw firstError(ballot);
}

/** Holders seen on at least `quorum` nodes (one node: all of them), waiters as the most any node saw. */
export function mergeNodes(perNode: KindState[][], quorum: number): KindState[] {
  if (perNode.length === 1) return perNode[0]!;
  const byKind = new Map<LockKind, { state: KindState; seen: Map<string, number> }>();
  for (const states of perNode) {
    for (const state of states) {
      const merged = byKind.get(state.kind) ?? {
        state: { ...state, holders: [] as RawHolder[], waitersByEngine: new Map<string, number>() },
        seen: new Map<string, number>(),
      };
      byKind.set(state.kind, merged);
      for (const h of state.holders) {
        const n = (merged.seen.get(h.ownerId) ?? 0) + 1;
        merged.seen.set(h.ownerId, n);
        if (n === quorum) merged.state.holders.push(h);
      }
      const waiters = merged.state.waitersByEngine;
      for (const [engine, count] of state.waitersByEngine) {
        waiters.set(engine, Math.max(count, waiters.get(engine) ?? 0));
      }
    }
  }
  return [...byKind.values()].map((m) => m.state).filter((s) => s.holders.length > 0);
}
