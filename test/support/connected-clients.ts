import { createLockEngine } from '../../lib/core';
import type { LockEngine } from '../../lib/core/engine/lock-engine';

/** How {@link enginesOnConnectedClients} makes and closes clients of one topology. */
export interface ClientMaker {
  /** A client connected (Cluster slots found, Sentinel master discovered) before it is returned. */
  connected(): Promise<unknown>;
  /** A client made synchronously and not connected yet: the library connects it. */
  unconnected(): unknown;
  close(client: unknown): Promise<void>;
  /** Whether a client connected ahead can serve the next test's engines (connected and ready). */
  reusable?(client: unknown): boolean;
  /** Closes every client made. */
  closeClients(): Promise<void>;
  /** One client every engine shares (GLIDE multiplexes), made before the first test, if set. */
  shared?(): Promise<unknown>;
}

/**
 * Engines of a Cluster or Sentinel spec, on clients of one family. Finding a Cluster's slots or a
 * Sentinel's master can take longer than a `waitMs: 0` call's 400 ms margin on this shared machine,
 * so, as users do, the first `ahead` engines of a test get clients connected before the test starts;
 * further engines get a client made synchronously, which the library connects. After a test its
 * engines are closed; a client connected ahead that is still ready serves the next test's engines, as
 * an application's client outlives the engines made on it (the engine never closes a client it was
 * given, and leaves nothing of its own on it). The others are closed, and the pool topped up. (Making
 * a node-redis Sentinel or Cluster client costs ~50 ms of CPU: node-redis builds its command methods
 * for each client it creates, the master's and replicas' too.)
 */
export function enginesOnConnectedClients(maker: ClientMaker, ahead: number, keyPrefix: string) {
  let shared: unknown;
  const ready: unknown[] = [];
  let used: unknown[] = [];
  /** The clients connected ahead (from `ready`), which may go back to it after their test. */
  const pooled = new Set<unknown>();
  let engines: LockEngine[] = [];
  const topUp = async (): Promise<void> => {
    if (shared) return;
    const missing = ahead - ready.length;
    const made = await Promise.all(Array.from({ length: missing }, () => maker.connected()));
    for (const client of made) pooled.add(client);
    ready.push(...made);
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
      const reused = done.filter((c) => pooled.has(c) && maker.reusable?.(c) === true);
      ready.push(...reused);
      const closing = done.filter((c) => !reused.includes(c));
      for (const client of closing) pooled.delete(client);
      await Promise.all(closing.map((c) => maker.close(c)));
      await topUp();
    },
    async stop(): Promise<void> {
      await Promise.all(engines.splice(0).map((e) => e.close()));
      ready.length = 0;
      used = [];
      pooled.clear();
      await maker.closeClients();
      shared = undefined;
    },
  };
}
