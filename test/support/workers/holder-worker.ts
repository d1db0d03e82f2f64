/*
 * The lock holder of the cross-process specs: a lock engine in an OS process of its own, driven over
 * stdin/stdout by the protocol of holder-protocol.ts (acquire, release, fenced write, block, ping,
 * close). The specs of mutual exclusion under load drive counter-worker.ts instead.
 *
 * Env: REDIS_URL, or CLUSTER_NODES (comma-separated ports of 127.0.0.1); ENGINE_OPTIONS (JSON, merged
 * into createLockEngine's options); KEY_PREFIX and APP (engine options too, as the lock env passes
 * them); ORACLE_URL: the fencing oracle's Redis (default: the lock's own Redis or Cluster); ORDER_KEY:
 * a list on the lock's Redis that each grant RPUSHes its id to inside the section (the grant order).
 */
import { existsSync } from 'fs';
import Redis, { Cluster } from 'ioredis';
import { createLockEngine, LockHandle, LockLostError } from '../../../lib/core';
import type { LockOptions } from '../../../lib/core/options/lock-options';
import { epochMs } from '../clock';
import { FenceOracle } from '../fence-oracle';
import { emit, onParentMessage, requiredEnv } from '../worker-io';
import type { HolderCommand, HolderMessage } from './holder-protocol';

const send = (message: HolderMessage): void => emit(message as unknown as Record<string, unknown>);

process.on('unhandledRejection', (reason) => {
  send({ type: 'unhandled', error: String((reason as Error)?.stack ?? reason) });
  process.exitCode = 70;
});

const nodes = process.env.CLUSTER_NODES;
const cluster = nodes
  ? new Cluster(nodes.split(',').map((port) => ({ host: '127.0.0.1', port: Number(port) })))
  : undefined;
// On a single Redis the engine owns its connection (made from the URL, as an app's would be); the
// order list and an oracle on the lock's Redis get a client of their own, made when first needed.
const engine = createLockEngine({
  redis: cluster ?? requiredEnv('REDIS_URL'),
  ...(process.env.KEY_PREFIX !== undefined && { keyPrefix: process.env.KEY_PREFIX }),
  ...(process.env.APP !== undefined && { app: process.env.APP }),
  ...JSON.parse(process.env.ENGINE_OPTIONS ?? '{}'),
});
let dataClient: Redis | undefined;
const data = (): Redis | Cluster =>
  cluster ?? (dataClient ??= new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: 3 }));
let fenceOracle: FenceOracle | undefined;
const oracle = (): FenceOracle => (fenceOracle ??= new FenceOracle(process.env.ORACLE_URL ?? data()));
const orderKey = process.env.ORDER_KEY;
/** Every hold of an id, the first one first. */
const held = new Map<string, LockHandle[]>();
const attemptsByKey = new Map<string, number>();

engine.events.on('contended', (e) => send({ type: 'contended', key: e.key }));
engine.events.on('acquired', (e) => attemptsByKey.set(e.key, e.attempts));
// Watchdog rounds, so a test can act right after a renewal (e.g. partition the holder then).
engine.events.on('renewed', (round) => send({ type: 'renewed', renewed: round.renewed, at: epochMs() }));

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function acquire(command: Extract<HolderCommand, { type: 'acquire' }>): Promise<void> {
  const { id, key, options, holdMs, reenter = 0 } = command;
  try {
    const lock = await engine.acquire(key, { waitMs: 120_000, ...options });
    const holds = [lock];
    for (let i = 0; i < reenter; i++)
      holds.push(await engine.runInLock(lock, () => engine.acquire(key, options as LockOptions)));
    held.set(id, holds);
    lock.signal.addEventListener('abort', () => {
      const reason = lock.signal.reason;
      send({
        type: 'lost',
        id,
        reason: reason instanceof LockLostError ? reason.reason : String(reason),
        at: epochMs(),
      });
    });
    if (orderKey) await data().rpush(orderKey, id);
    send({ type: 'granted', id, token: lock.fencingToken, attempts: attemptsByKey.get(key), at: epochMs() });
    if (holdMs !== undefined) {
      await sleep(holdMs);
      await release(id);
    }
  } catch (err) {
    const e = err as Error;
    send({ type: 'failed', id, name: e.name, message: e.message });
  }
}

async function release(id: string): Promise<void> {
  const holds = held.get(id) ?? [];
  held.delete(id);
  const results: boolean[] = [];
  for (const hold of [...holds].reverse()) results.push(await hold.release());
  send({ type: 'released', id, result: holds.length > 0 && results.every(Boolean), at: epochMs() });
}

async function write(id: string, resource: string): Promise<void> {
  // Deliberately ignores the signal: this is the holder that already decided to write.
  const token = held.get(id)?.[0]?.fencingToken ?? 0;
  const { accepted, last } = await oracle().write(resource, token, id);
  send({ type: 'written', id, token, accepted, last, at: epochMs() });
}

/** Spins until `file` exists or `maxMs` passed: no timer, no I/O callback, no renewal runs meanwhile. */
function busyWaitForFile(file: string, maxMs: number): number {
  const started = performance.now();
  while (!existsSync(file) && performance.now() - started < maxMs) {
    // spinning on purpose
  }
  return performance.now() - started;
}

async function handle(command: HolderCommand): Promise<void> {
  switch (command.type) {
    case 'acquire':
      return acquire(command);
    case 'release':
      return release(command.id);
    case 'write':
      return write(command.id, command.resource);
    case 'block': {
      const blockedMs = busyWaitForFile(command.untilFile, command.maxMs);
      send({ type: 'blocked', blockedMs, at: epochMs() });
      if (command.thenWrite) await write(command.thenWrite.id, command.thenWrite.resource);
      return;
    }
    case 'ping':
      send({ type: 'pong', id: command.id, at: epochMs() });
      return;
    case 'close':
      stopListening();
      await close();
      send({ type: 'closed' });
  }
}

let closing: Promise<void> | undefined;
function close(): Promise<void> {
  closing ??= (async () => {
    await engine.close();
    await fenceOracle?.close();
    for (const client of [dataClient, cluster]) await client?.quit().catch(() => client.disconnect());
  })();
  return closing;
}

const stopListening = onParentMessage((command: HolderCommand) => {
  handle(command).catch((err) => send({ type: 'unhandled', error: String(err?.stack ?? err) }));
});
process.on('SIGTERM', () => {
  void close().finally(() => process.exit(0));
});
send({ type: 'ready', pid: process.pid, engine: engine.engineId });
