/*
 * One process of the "every holder told" history (issue 39, test/faults/timing/holder-history.spec.ts):
 * a lock engine of its own and a few callers, each looping over a small set of keys: acquire -> record
 * the grant -> a fenced write through the oracle -> hold (a few ms, or a few hundred) -> a second fenced
 * write unless told meanwhile -> release. Every grant, loss signal, write, release and failed acquire
 * is recorded with historyEpochMs() (history-clock.ts) and sent to the test in one `history` message when it says `stop`
 * (history-protocol.ts).
 *
 * Env: REDIS_URL (the locks); ORACLE_URL (the fencing oracle, on a Redis of its own); ENGINE_OPTIONS
 * (JSON, merged into createLockEngine's options: `redis` too, for a Sentinel); WAIT_MS (optional, each
 * acquire's waitMs); PROCESS (this process' name in the history); KEYS
 * (comma-separated lock keys); CALLERS (JSON HistoryCaller[]: one caller each); HOLDS (JSON: holds are
 * `longMs` [min, max] with probability `longShare`, else `shortMs` [min, max]).
 *
 * Besides the history, each caller says live when it starts waiting for a key and when it holds one
 * (with the hold it drew), so the test can pick the moment of a fault.
 *
 * The fenced writes go to two resources per key: `<key>` right after the grant and `<key>:end` at the
 * end of the hold (the oracle accepts a token once per resource). A caller told of its loss skips the
 * second write, as a careful holder would, and stops holding at once.
 */
import { createLockEngine, LockLostError, type LockHandle } from '../../../lib/core';
import { FenceOracle } from '../fence-oracle';
import { emit, onParentMessage, requiredEnv } from '../worker-io';
import { historyEpochMs } from './history-clock';
import type { HistoryCaller, HistoryCommand, HistoryEvent, HistoryMessage } from './history-protocol';

const send = (message: HistoryMessage): void => emit(message as unknown as Record<string, unknown>);

process.on('unhandledRejection', (reason) => {
  send({ type: 'unhandled', error: String((reason as Error)?.stack ?? reason) });
  process.exitCode = 70;
});

/** A caller retries this soon after a failed acquire (Redis down). */
const RETRY_AFTER_MS = 20;
/**
 * By default longer than the whole run: a caller waits for a busy lock until it gets it or Redis fails.
 * WAIT_MS (env) sets another.
 */
const WAIT_MS = Number(process.env.WAIT_MS ?? 60_000);

interface Holds {
  shortMs: [number, number];
  longMs: [number, number];
  longShare: number;
}

const name = requiredEnv('PROCESS');
const keys = requiredEnv('KEYS').split(',');
const callers = JSON.parse(requiredEnv('CALLERS')) as HistoryCaller[];
const holds = JSON.parse(requiredEnv('HOLDS')) as Holds;
const engine = createLockEngine({
  redis: requiredEnv('REDIS_URL'),
  ...JSON.parse(process.env.ENGINE_OPTIONS ?? '{}'),
});
const oracle = new FenceOracle(requiredEnv('ORACLE_URL'));
const events: HistoryEvent[] = [];
const stopping = new AbortController();
let loops: Promise<void>[] = [];

engine.events.on('connection', (c) =>
  events.push({ type: 'connection', name: c.name, state: c.state, at: historyEpochMs() }),
);

const between = ([min, max]: [number, number]): number => min + Math.random() * (max - min);

/** Resolves after `ms`, or at once when one of `signals` aborts. */
function hold(ms: number, signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const s of signals) s.addEventListener('abort', done, { once: true });
    if (signals.some((s) => s.aborted)) done();
  });
}

async function write(caller: number, lock: LockHandle, resource: string): Promise<void> {
  const at = historyEpochMs();
  const { accepted, last } = await oracle.write(resource, lock.fencingToken, `${name}/${caller}`);
  events.push({
    type: 'write',
    caller,
    key: lock.key,
    resource,
    token: lock.fencingToken,
    accepted,
    last,
    at,
    doneAt: historyEpochMs(),
  });
}

async function loop(caller: number, { leaseMs }: HistoryCaller): Promise<void> {
  const lease = leaseMs === undefined ? 'watchdog' : 'fixed';
  let retryKey: string | undefined;
  while (!stopping.signal.aborted) {
    // A failed acquire is retried on the same key; otherwise any key.
    const key = retryKey ?? keys[Math.floor(Math.random() * keys.length)]!;
    retryKey = undefined;
    send({ type: 'waiting', caller, key, at: historyEpochMs() });
    let lock: LockHandle;
    try {
      lock = await engine.acquire(key, {
        waitMs: WAIT_MS,
        signal: stopping.signal,
        ...(leaseMs !== undefined && { leaseMs }),
      });
    } catch (err) {
      if (stopping.signal.aborted) break;
      const e = err as Error;
      events.push({
        type: 'acquireError',
        caller,
        key,
        name: e.name,
        message: e.message,
        at: historyEpochMs(),
      });
      retryKey = key;
      await hold(RETRY_AFTER_MS, [stopping.signal]);
      continue;
    }
    const token = lock.fencingToken;
    const at = historyEpochMs();
    const holdMs = between(Math.random() < holds.longShare ? holds.longMs : holds.shortMs);
    events.push({ type: 'grant', caller, key, token, lease, at });
    send({ type: 'holding', caller, key, lease, holdMs, at });
    const told = (): void => {
      const reason: unknown = lock.signal.reason;
      events.push({
        type: 'loss',
        caller,
        key,
        token,
        reason: reason instanceof LockLostError ? reason.reason : String(reason),
        lostError: reason instanceof LockLostError,
        at: historyEpochMs(),
      });
    };
    if (lock.signal.aborted) told();
    else lock.signal.addEventListener('abort', told, { once: true });

    await write(caller, lock, key);
    await hold(holdMs, [lock.signal, stopping.signal]);
    if (!lock.signal.aborted) await write(caller, lock, `${key}:end`);
    const releaseAt = historyEpochMs();
    const result = await lock.release();
    events.push({ type: 'release', caller, key, token, result, at: releaseAt, doneAt: historyEpochMs() });
  }
}

async function handle(command: HistoryCommand): Promise<void> {
  switch (command.type) {
    case 'go':
      loops = callers.map((caller, i) => loop(i, caller));
      return;
    case 'stop':
      stopping.abort(new Error('stopped'));
      await Promise.all(loops);
      send({ type: 'history', process: name, events });
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
    stopping.abort(new Error('closed'));
    await Promise.allSettled(loops);
    await engine.close();
    await oracle.close();
  })();
  return closing;
}

const stopListening = onParentMessage((command: HistoryCommand) => {
  handle(command).catch((err) => send({ type: 'unhandled', error: String(err?.stack ?? err) }));
});
process.on('SIGTERM', () => {
  void close().finally(() => process.exit(0));
});
send({ type: 'ready', pid: process.pid, engine: engine.engineId });
