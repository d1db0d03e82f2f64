import calculateSlot from 'cluster-key-slot';
import type { ScriptRunner } from '../redis/redis-gateway';
import { defineScript, LuaScript } from '../redis/script-library';
import type { RenewRequest, RenewResult } from './lock-kind';
import type { RenewReply } from './script-replies';

/** ARGV: owner id, new lease ms, per request. */
type RenewArgs = (string | number)[];
const RENEW = defineScript<RenewArgs, RenewReply>('renew');
/** The shared-holder kinds' renewal (read-write lock, semaphore): two keys per request. */
export const HOLDERS_RENEW = defineScript<RenewArgs, RenewReply>('holders-renew');
/** Requests per script call: keeps batches well under Redis' argument and reply limits. */
const CHUNK = 500;

/**
 * Renews mutex and token-lock leases (renew.lua, one key per lock) with as few commands as the
 * topology allows.
 */
export function renewInBatches(
  gateway: ScriptRunner,
  requests: readonly RenewRequest[],
): Promise<RenewResult[]> {
  return renewPerSlot(gateway, RENEW, requests, (r) => [r.names.lock]);
}

/**
 * Renews leases with a multi-lock script: one call per 500 locks on a single Redis, one per hash
 * slot (and 500 locks) on a Cluster. The script gets `keysOf(r)` for each request in order and ARGV
 * owner, lease ms per request, and answers 1 renewed, 0 gone, -1 taken over per request.
 */
export async function renewPerSlot(
  gateway: ScriptRunner,
  script: LuaScript<RenewArgs, RenewReply>,
  requests: readonly RenewRequest[],
  keysOf: (request: RenewRequest) => string[],
): Promise<RenewResult[]> {
  const results: RenewResult[] = new Array(requests.length);
  const groups = new Map<number, number[]>();
  const cluster = gateway.cluster;
  requests.forEach((r, i) => {
    const group = cluster ? calculateSlot(r.names.lock) : 0;
    const list = groups.get(group) ?? [];
    list.push(i);
    groups.set(group, list);
  });
  const calls: Promise<void>[] = [];
  const failures: unknown[] = [];
  for (const indexes of groups.values()) {
    for (let start = 0; start < indexes.length; start += CHUNK) {
      const chunk = indexes.slice(start, start + CHUNK);
      const keys = chunk.flatMap((i) => keysOf(requests[i]!));
      const args = chunk.flatMap((i) => [requests[i]!.owner, requests[i]!.leaseMs]);
      // Bounded by the shortest lease left in the chunk (and the command timeout).
      const timeoutMs = Math.min(...chunk.map((i) => requests[i]!.timeoutMs ?? Infinity));
      // A check (lease 0, a connection came back) rides out a failover as a renewal does, until the
      // lease left: a lock that a promoted replica kept is still held. Only its final failure counts.
      const check = chunk.every((i) => requests[i]!.leaseMs === 0);
      calls.push(
        gateway.run(script, keys, args, { timeoutMs }).then(
          (reply) => {
            reply.forEach((code, j) => {
              results[chunk[j]!] = code === 1 ? 'renewed' : code === 0 ? 'gone' : 'taken-over';
            });
          },
          (err: unknown) => {
            // A check answers for the nodes that answered (a Cluster node restarting must not cost
            // the locks on the others); a renewal that failed anywhere rejects, as it always did.
            if (!check) throw err;
            for (const i of chunk) results[i] = 'unchecked';
            failures.push(err);
          },
        ),
      );
    }
  }
  await Promise.all(calls);
  // Nothing answered: the failure itself, as for a renewal.
  if (failures.length > 0 && results.every((r) => r === 'unchecked')) throw failures[0];
  return results;
}
