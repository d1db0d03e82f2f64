import type { Logger } from '@nestjs/common';
import type { LockEventMap, LockEvents } from '../core';
import { escapeKey } from './log-escape';

/**
 * Writes force releases and lost locks to the Nest log: the audit entry where a release was made, and
 * every lock of this app lost while held (evicted, expired, taken over, renewal failed, maxHoldMs),
 * once per loss; not the locks that shutdown ends. Returns the function that stops it.
 */
export function logLostLocks(events: LockEvents, logger: Logger): () => void {
  const onForced = (r: LockEventMap['forceReleased'][0]): void => {
    const evicted = r.evicted.map((e) => `${e.label} (token ${e.fencingToken})`).join(', ');
    logger.warn(
      `Lock ${JSON.stringify(r.key)} (${r.kind}) force-released by ${JSON.stringify(r.by)}: ` +
        `${JSON.stringify(r.reason)}; evicted ${evicted}; fence advanced to ${r.fence}; audit ${r.id}`,
    );
  };
  const onLost = (e: LockEventMap['lost'][0]): void => {
    const lock = `Lock ${escapeKey(e.key)} (${e.kind}, token ${e.fencingToken}) held here`;
    if (e.reason === 'force-released') {
      const why = e.error.cause instanceof Error ? `: ${JSON.stringify(e.error.cause.message)}` : '';
      logger.warn(`${lock} was force-released${why}; its signal was aborted`);
      return;
    }
    // Shutdown ends what outlived drainMs on purpose; every other loss leaves code running unprotected.
    if (e.reason === 'closed') return;
    logger.warn(
      `${lock} was lost (${e.reason}) after ${Math.round(e.heldMs)} ms; its signal was aborted, and code still ` +
        'running under it is no longer protected',
    );
  };
  events.on('forceReleased', onForced);
  events.on('lost', onLost);
  return () => {
    events.off('forceReleased', onForced);
    events.off('lost', onLost);
  };
}
