import calculateSlot from 'cluster-key-slot';
import { isCluster } from './redis-client';
import { RedisGateway } from './redis-gateway';
import { loadScript } from './script-library';
import type { RenewRequest, RenewResult } from './lock-kind';

const RENEW = loadScript('renew');
/** Keys per renew call: large batches stay well under Redis' argument and reply limits. */
const CHUNK = 500;

/**
 * Renews mutex and token-lock leases with as few commands as the topology allows: one script call
 * per 500 locks on a single Redis, one per hash slot (and 500 locks) on a Cluster.
 */
export async function renewInBatches(gateway: RedisGateway, requests: readonly RenewRequest[]): Promise<RenewResult[]> {
  const results: RenewResult[] = new Array(requests.length);
  const groups = new Map<number, number[]>();
  const cluster = isCluster(gateway.client);
  requests.forEach((r, i) => {
    const group = cluster ? calculateSlot(r.names.lock) : 0;
    const list = groups.get(group) ?? [];
    list.push(i);
    groups.set(group, list);
  });
  const calls: Promise<void>[] = [];
  for (const indexes of groups.values()) {
    for (let start = 0; start < indexes.length; start += CHUNK) {
      const chunk = indexes.slice(start, start + CHUNK);
      const keys = chunk.map((i) => requests[i]!.names.lock);
      const args = chunk.flatMap((i) => [requests[i]!.owner, requests[i]!.leaseMs]);
      calls.push(
        gateway.run(RENEW, keys, args).then((reply) => {
          (reply as number[]).forEach((code, j) => {
            results[chunk[j]!] = code === 1 ? 'renewed' : code === 0 ? 'gone' : 'taken-over';
          });
        }),
      );
    }
  }
  await Promise.all(calls);
  return results;
}
