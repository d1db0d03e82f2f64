import { Injectable, type MessageEvent, type OnModuleDestroy } from '@nestjs/common';
import { Observable, Subject, takeUntil } from 'rxjs';
import type { LockEventMap, LockEvents } from '../core';

/** The events the console streams (`type` of each SSE message). */
export type ConsoleEventType = 'acquired' | 'released' | 'lost' | 'forceReleased';

/**
 * The console's server-sent events: this app's grants, releases, losses and force releases. The
 * page also re-reads the list on a timer, which shows what other processes do. Every stream ends
 * when the module is destroyed, so app.close() never waits for an open browser tab.
 */
@Injectable()
export class ConsoleEvents implements OnModuleDestroy {
  private readonly closing = new Subject<void>();

  /** A stream of SSE messages from `events`, until the client leaves or the app closes. */
  stream(events: LockEvents): Observable<MessageEvent> {
    const live = new Observable<MessageEvent>((subscriber) => {
      const send = (type: ConsoleEventType, data: object): void => subscriber.next({ type, data });
      const onAcquired = (e: LockEventMap['acquired'][0]): void => {
        if (!e.reentered) send('acquired', { key: e.key, kind: e.kind, fencingToken: e.fencingToken });
      };
      const onReleased = (e: LockEventMap['released'][0]): void => {
        if (e.result === 'released') {
          send('released', { key: e.key, kind: e.kind, fencingToken: e.fencingToken, heldMs: e.heldMs });
        }
      };
      const onLost = (e: LockEventMap['lost'][0]): void =>
        send('lost', { key: e.key, kind: e.kind, fencingToken: e.fencingToken, reason: e.reason });
      const onForced = (e: LockEventMap['forceReleased'][0]): void => send('forceReleased', e);
      events.on('acquired', onAcquired);
      events.on('released', onReleased);
      events.on('lost', onLost);
      events.on('forceReleased', onForced);
      // Tells the page the stream is open (and lets proxies see bytes at once).
      subscriber.next({ type: 'hello', data: {} });
      return () => {
        events.off('acquired', onAcquired);
        events.off('released', onReleased);
        events.off('lost', onLost);
        events.off('forceReleased', onForced);
      };
    });
    return live.pipe(takeUntil(this.closing));
  }

  /** @internal Ends every open stream. */
  onModuleDestroy(): void {
    this.closing.next();
    this.closing.complete();
  }
}
