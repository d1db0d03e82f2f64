/*
 * One OS process of the topology tests. Builds a lock engine on the topology named by TOPOLOGY
 * (cluster / sentinel / redlock), then on {type:'run', scope, key} runs CALLERS loops that each take
 * the lock, report entry and exit to the fencing oracle, hold it HOLD_MS, and release it. Errors
 * (expected while a master fails over) are counted by class name and the loop goes on.
 *
 * Out: {type:'ready'}, {type:'progress', acquired} every 200 ms while running,
 *      {type:'done', scope, acquired, errors, lost} after {type:'stop'}. {type:'exit'} closes all.
 */
import { Cluster } from 'ioredis';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import type { CreateLockEngineOptions } from '../../../lib/core';
import { FenceOracle } from '../fence-oracle';
import { emit, onParentMessage, requiredEnv } from '../worker-io';

type Topology =
  | { kind: 'cluster'; startupNodes: { host: string; port: number }[] }
  | { kind: 'sentinel'; sentinels: { host: string; port: number }[]; name: string }
  | { kind: 'redlock'; urls: string[] };

const topology = JSON.parse(requiredEnv('TOPOLOGY')) as Topology;
const id = requiredEnv('WORKER_ID');
const callers = Number(requiredEnv('CALLERS'));
const holdMs = Number(requiredEnv('HOLD_MS'));
const tuning = JSON.parse(process.env.ENGINE_OPTIONS ?? '{}') as Partial<CreateLockEngineOptions>;

const cluster =
  topology.kind === 'cluster'
    ? new Cluster(topology.startupNodes, { redisOptions: { maxRetriesPerRequest: 3 } })
    : undefined;
cluster?.on('error', () => undefined);
const engine = createLockEngine({
  keyPrefix: `topo:`,
  ...tuning,
  ...(topology.kind === 'cluster' && { redis: cluster }),
  ...(topology.kind === 'sentinel' && { redis: { sentinels: topology.sentinels, name: topology.name } }),
  ...(topology.kind === 'redlock' && { redlock: topology.urls }),
});
const oracle = new FenceOracle(requiredEnv('ORACLE_URL'));

let running = false;
let acquired = 0;
let lost = 0;
let errors: Record<string, number> = {};
let loops: Promise<void>[] = [];
let ticker: NodeJS.Timeout | undefined;
engine.events.on('lost', () => lost++);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function loop(scope: string, key: string, caller: number): Promise<void> {
  const holder = `${id}.${caller}`;
  while (running) {
    try {
      await engine.using(key, { waitMs: 5000 }, async (lock) => {
        await oracle.enter(scope, lock.fencingToken, holder);
        await sleep(holdMs);
        await oracle.exit(scope, holder);
      });
      acquired++;
    } catch (err) {
      const name = err instanceof Error ? err.name : typeof err;
      errors[name] = (errors[name] ?? 0) + 1;
      await sleep(50); // a master is failing over: do not spin
    }
  }
}

const stopListening = onParentMessage((message: { type: string; scope?: string; key?: string }) => {
  if (message.type === 'run') {
    running = true;
    acquired = 0;
    lost = 0;
    errors = {};
    loops = Array.from({ length: callers }, (_, i) => loop(message.scope!, message.key!, i));
    ticker = setInterval(() => emit({ type: 'progress', acquired }), 200);
  } else if (message.type === 'stop') {
    running = false;
    clearInterval(ticker);
    void Promise.all(loops).then(() => emit({ type: 'done', scope: message.scope, acquired, errors, lost }));
  } else if (message.type === 'exit') {
    stopListening();
    void (async () => {
      await engine.close();
      cluster?.disconnect();
      await oracle.close();
      process.exit(0);
    })();
  }
});
emit({ type: 'ready', id });
