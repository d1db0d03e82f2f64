/*
 * A lock holder in its own OS process, driven by the fault tests over stdin/stdout (one JSON
 * line each way): it takes locks, writes to the fencing oracle with its token, releases, and can
 * block its own event loop. It reports every lost-lock signal the moment it fires, so the test
 * can see when (and whether) the holder learnt of a loss. Env: REDIS_URL, STORE_URL,
 * ENGINE_OPTIONS (JSON, merged into createLockEngine's options), WORKER_NAME.
 */
import { existsSync } from 'fs';
import { createLockEngine, LockHandle, LockLostError } from '../../../lib/core';
import { emit, onParentMessage, requiredEnv } from '../worker-io';
import { epochMs } from '../clock';
import { FenceOracle } from '../fence-oracle';
import type { HolderCommand, HolderMessage } from './fault-protocol';

const send = (message: HolderMessage): void => emit(message as unknown as Record<string, unknown>);

process.on('unhandledRejection', (reason) => {
  send({ type: 'unhandled', error: String((reason as Error)?.stack ?? reason) });
  process.exitCode = 70;
});

const name = requiredEnv('WORKER_NAME');
const engine = createLockEngine({
  redis: requiredEnv('REDIS_URL'),
  ...JSON.parse(process.env.ENGINE_OPTIONS ?? '{}'),
});
const store = new FenceOracle(requiredEnv('STORE_URL'));
const held = new Map<string, LockHandle>();
// Watchdog rounds, so a test can act right after a renewal (e.g. partition the holder then).
engine.events.on('renewed', (round) => send({ type: 'renewed', renewed: round.renewed, at: epochMs() }));

/** Spins until `file` exists or `maxMs` passed: no timer, no I/O callback, no renewal runs meanwhile. */
function busyWaitForFile(file: string, maxMs: number): number {
  const started = performance.now();
  while (!existsSync(file) && performance.now() - started < maxMs) {
    // spinning on purpose
  }
  return performance.now() - started;
}

async function handle(message: HolderCommand): Promise<void> {
  switch (message.cmd) {
    case 'hold': {
      const id = message.as ?? message.key;
      try {
        const lock = await engine.acquire(message.key, { waitMs: 30_000, leaseMs: message.leaseMs });
        held.set(id, lock);
        lock.signal.addEventListener('abort', () => {
          const reason =
            lock.signal.reason instanceof LockLostError
              ? lock.signal.reason.reason
              : String(lock.signal.reason);
          send({ type: 'lost', key: id, reason, at: epochMs() });
        });
        send({ type: 'acquired', key: id, token: lock.fencingToken, at: epochMs() });
      } catch (err) {
        send({
          type: 'acquire-failed',
          key: id,
          error: (err as Error).name,
          message: (err as Error).message,
        });
      }
      return;
    }
    case 'write': {
      // Deliberately ignores the signal: this is the holder that already decided to write.
      const id = message.as ?? message.key;
      const token = held.get(id)!.fencingToken;
      const { accepted } = await store.write(message.key, token, name);
      send({ type: 'written', key: id, token, accepted, at: epochMs() });
      return;
    }
    case 'release': {
      const id = message.as ?? message.key;
      const result = await held.get(id)!.release();
      send({ type: 'released', key: id, result, at: epochMs() });
      return;
    }
    case 'block': {
      const blockedMs = busyWaitForFile(message.untilFile, message.maxMs);
      send({ type: 'blocked', blockedMs, at: epochMs() });
      if (message.thenWrite) await handle({ cmd: 'write', key: message.thenWrite });
      return;
    }
    case 'ping':
      send({ type: 'pong', at: epochMs() });
      return;
    case 'close': {
      stopListening();
      await engine.close();
      await store.close();
      send({ type: 'closed' });
      return;
    }
  }
}

const stopListening = onParentMessage((message: HolderCommand) => {
  handle(message).catch((err) => send({ type: 'unhandled', error: String(err?.stack ?? err) }));
});
send({ type: 'ready', pid: process.pid });
