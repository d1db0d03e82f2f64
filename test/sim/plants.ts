import { HeldLocks } from '../../lib/core/grant/held-locks';
import { LockGrant } from '../../lib/core/grant/lock-grant';
import { ForceRelease } from '../../lib/core/inspection/force-release';
import type { WorldHooks } from './world';

/**
 * Known bugs the checker must catch (`npm run sim -- --plants`). Each is planted only for the run it is
 * tested in: a patch of one method of the real engine, or of how a simulated server runs one script,
 * undone when the run ends. A checker that lets one through is a checker that cannot fail.
 */
export interface Plant {
  readonly description: string;
  /** What the world changes as it is built. */
  readonly hooks: WorldHooks;
  /** Patches the engine's code; returns the undo. */
  readonly patch?: () => () => void;
}

type Method = (this: any, ...args: any[]) => unknown;
type Patchable = Record<string, unknown>;

function patchMethod(proto: object, name: string, make: (original: Method) => Method): () => void {
  const target = proto as Patchable;
  const original = target[name] as Method;
  target[name] = make(original);
  return () => void (target[name] = original);
}

export const PLANTS = {
  'no-drift': {
    description: 'the lease ends locally at Redis own expiry (no drift allowance)',
    hooks: {},
    // LockGrant.schedule() arms the local end; the bug drops the allowance first.
    patch: () =>
      patchMethod(
        LockGrant.prototype,
        'schedule',
        (original) =>
          function (this: LockGrant) {
            this.localEnd = this.expiresAt;
            return (original as (this: LockGrant) => unknown).call(this);
          },
      ),
  },
  'no-fence-floor': {
    description: 'no fence floor: a token is the last one + 1, without the server clock under it',
    hooks: {
      server: (server) => {
        // The server clock's microseconds are the floor of every token (fence.lua's TIME).
        const stores = new WeakSet<object>();
        const floorless = () => {
          if (stores.has(server.store)) return;
          stores.add(server.store);
          server.store.nowUs = () => 0;
        };
        const previous = server.hook;
        server.hook = (s, name, keys, args) => {
          floorless();
          return previous ? previous(s, name, keys, args) : s.runPort(name, keys, args);
        };
      },
    },
  },
  'release-without-owner-check': {
    description: 'a release that deletes the lock without checking its owner',
    hooks: {
      server: (server) => {
        server.hook = (s, name, keys, args) => {
          const reply = s.runPort(name, keys, args);
          // The bug: the lock goes whoever holds it, when the release found it not held by the caller.
          if (name === 'mutex-release' || name === 'token-release') s.store.del(keys[0]!);
          return reply;
        };
      },
    },
  },
  'lost-waiter-mark': {
    description: 'a busy mutex attempt does not leave its waiter mark, so the release wakes nobody',
    hooks: {
      server: (server) => {
        server.hook = (s, name, keys, args) => {
          const reply = s.runPort(name, keys, args);
          if (name === 'mutex-acquire') {
            const lock = keys[0]!;
            const type = s.store.type(lock);
            if (type === 'string') {
              const value = s.store.get(lock)!;
              if (value.endsWith(' w')) s.store.set(lock, value.slice(0, -2), s.store.pttl(lock));
            } else if (type === 'hash') {
              s.store.hdel(lock, 'w');
            }
            s.store.del(keys[1]!); // the waiters zset of the cohort reservation
          }
          return reply;
        };
      },
    },
  },
  'watchdog-after-release': {
    description: 'release() of a watchdog lease leaves it to the watchdog, which keeps renewing it',
    hooks: {},
    patch: () =>
      patchMethod(
        HeldLocks.prototype,
        'release',
        (original) =>
          function (this: HeldLocks, grant: LockGrant, holdId: string) {
            if (grant.watchdog && grant.active) return Promise.resolve(true);
            return (original as (this: HeldLocks, g: LockGrant, h: string) => unknown).call(
              this,
              grant,
              holdId,
            );
          },
      ),
  },
  'unheard-force-release': {
    description: 'a force-release notice is dropped: a holder in another process is never told',
    hooks: {},
    patch: () => patchMethod(ForceRelease.prototype, 'onNotice', () => () => undefined),
  },
} satisfies Record<string, Plant>;

export type PlantName = keyof typeof PLANTS;
