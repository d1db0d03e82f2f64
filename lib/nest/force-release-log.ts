import type { Logger } from '@nestjs/common';
import type { LockEventMap, LockEvents } from '../core';

/**
 * Writes force releases to the Nest log: the audit entry where the release was made, and the loss
 * where a holder of this app was evicted. Returns the function that stops it.
 */
export function logForceReleases(events: LockEvents, logger: Logger): () => void {
  const onForced = (r: LockEventMap['forceReleased'][0]): void => {
    const evicted = r.evicted.map((e) => `${e.label} (token ${e.fencingToken})`).join(', ');
    logger.warn(
      `Lock ${JSON.stringify(r.key)} (${r.kind}) force-released by ${JSON.stringify(r.by)}: ` +
        `${JSON.stringify(r.reason)}; evicted ${evicted}; fence advanced to ${r.fence}; audit ${r.id}`,
    );
  };
  const onLost = (e: LockEventMap['lost'][0]): void => {
    if (e.reason !== 'force-released') return;
    const why = e.error.cause instanceof Error ? `: ${JSON.stringify(e.error.cause.message)}` : '';
    logger.warn(
      `Lock ${JSON.stringify(e.key)} (${e.kind}, token ${e.fencingToken}) held here was force-released${why}; its signal was aborted`,
    );
  };
  events.on('forceReleased', onForced);
  events.on('lost', onLost);
  return () => {
    events.off('forceReleased', onForced);
    events.off('lost', onLost);
  };
}
