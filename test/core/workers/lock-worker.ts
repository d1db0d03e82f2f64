/*
 * A lock engine in its own OS process, driven by the parent test over stdin/stdout (JSON lines).
 *
 * Env: REDIS_URL, ENGINE_OPTIONS (JSON of createLockEngine options without `redis`).
 * In:  {type:'acquire', id, key, options?}  {type:'release', id}  {type:'close'}
 * Out: {type:'ready'}  {type:'contended', key}  {type:'acquired', id, fencingToken, attempts}
 *      {type:'failed', id, name, message}  {type:'released', id, result}  {type:'lost', key, reason}
 */
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import type { LockHandle } from '../../../lib/core/engine/lock-grant';
import type { LockOptions } from '../../../lib/core/options/lock-options';
import { emit, onParentMessage, requiredEnv } from '../../support/worker-io';

type Command =
  | { type: 'acquire'; id: string; key: string; options?: LockOptions }
  | { type: 'release'; id: string }
  | { type: 'close' };

const engine = createLockEngine({
  redis: requiredEnv('REDIS_URL'),
  ...JSON.parse(process.env.ENGINE_OPTIONS ?? '{}'),
});
const handles = new Map<string, LockHandle>();
const attemptsByKey = new Map<string, number>();

engine.events.on('contended', (e) => emit({ type: 'contended', key: e.key }));
engine.events.on('acquired', (e) => attemptsByKey.set(e.key, e.attempts));
engine.events.on('lost', (e) => emit({ type: 'lost', key: e.key, reason: e.reason }));

async function handle(command: Command): Promise<void> {
  switch (command.type) {
    case 'acquire':
      try {
        const lock = await engine.acquire(command.key, command.options);
        handles.set(command.id, lock);
        emit({
          type: 'acquired',
          id: command.id,
          fencingToken: lock.fencingToken,
          attempts: attemptsByKey.get(command.key),
        });
      } catch (error) {
        const e = error as Error;
        emit({ type: 'failed', id: command.id, name: e.name, message: e.message });
      }
      return;
    case 'release': {
      const lock = handles.get(command.id);
      handles.delete(command.id);
      emit({ type: 'released', id: command.id, result: lock ? await lock.release() : 'unknown id' });
      return;
    }
    case 'close':
      stop();
      await engine.close();
      emit({ type: 'closed' });
      process.exit(0);
  }
}

const stop = onParentMessage((command: Command) => {
  handle(command).catch((error: unknown) => {
    emit({ type: 'error', message: String(error) });
    process.exit(1);
  });
});

emit({ type: 'ready', pid: process.pid });
