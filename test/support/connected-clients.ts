import { createLockEngine } from '../../lib/core';
import type { LockEngine } from '../../lib/core/engine/lock-engine';

/** How {@link enginesOnConnectedClients} makes and closes clients of one topology. */
export interface ClientMaker {
  /** A client connected (Cluster slots found, Sentinel master discovered) before it is returned. */
  connected(): Promise<unknown>;
  /** A client made synchronously and not connected yet: the library connects it. */
  unconnected(): unknown;
  close(client: unknown): Promise<void>;
  /** Closes every client made. */
  closeClients(): Promise<void>;
  /** One client every engine shares (GLIDE multiplexes), made before the first test, if set. */
  shared?(): Promise<unknown>;
}

/**
 * Engines of a Cluster or Sentinel spec, on clients of one family. Finding a Cluster's slots or a
 * Sentinel's master can take longer than a `waitMs: 0` call's 400 ms margin on this shared machine,
 * so, as users do, the first `ahead` engines of a test get clients connected before the test starts;
 * further engines get a client made synchronously, which the library connects. The clients a test
 * used are closed after it (the engine never closes a client it was given), and the connected ones
 * are topped up for the next.
 */
export function enginesOnConnectedClients(maker: ClientMaker, ahead: number, keyPrefix: string) {
  let shared: unknown;
  const ready: unknown[] = [];
  let used: unknown[] = [];
  let engines: LockEngine[] = [];
  const topUp = async (): Promise<void> => {
    if (shared) return;
    const missing = ahead - ready.length;
    ready.push(...(await Promise.all(Array.from({ length: missing }, () => maker.connected()))));
  };
  const open = (redis: unknown, options: object): LockEngine => {
    if (redis !== shared) used.push(redis);
    const engine = createLockEngine({ keyPrefix, ...options, redis: redis as never });
    engines.push(engine);
    return engine;
  };
  return {
    /** Before the first test: the shared client, or the first test's connected clients. */
    async start(): Promise<void> {
      shared = await maker.shared?.();
      await topUp();
    },
    engine(options: object = {}): LockEngine {
      return open(shared ?? ready.pop() ?? maker.unconnected(), options);
    },
    /** An engine on a client made synchronously and not connected yet, whatever the pool holds. */
    engineOnUnconnectedClient(options: object = {}): LockEngine {
      return open(maker.unconnected(), options);
    },
    /** After each test: its engines and clients closed, the next test's clients connected. */
    async closeEngines(): Promise<void> {
      const open = engines;
      engines = [];
      await Promise.all(open.map((e) => e.close()));
      const done = used;
      used = [];
      await Promise.all(done.map((c) => maker.close(c)));
      await topUp();
    },
    async stop(): Promise<void> {
      await Promise.all(engines.splice(0).map((e) => e.close()));
      ready.length = 0;
      used = [];
      await maker.closeClients();
      shared = undefined;
    },
  };
}
