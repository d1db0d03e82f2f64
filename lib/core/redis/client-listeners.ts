import type { EventEmitter } from 'node:events';

/** The event methods of a client (ioredis, iovalkey and node-redis clients are EventEmitters). */
export type EventSource = Pick<EventEmitter, 'on' | 'removeListener'>;

type Listener = Parameters<EventEmitter['on']>[1];

/**
 * The listeners a door or subscriber adds to a client, removed together at close. A client passed in
 * outlives the engines made on it (the user closes it): an engine's listeners left on it would keep
 * the closed engine in memory, and the eleventh engine on one client would set off Node's
 * MaxListenersExceededWarning.
 */
export class ClientListeners {
  private readonly added: [string, Listener][] = [];

  constructor(private readonly client: EventSource) {}

  on(event: string, listener: Listener): void {
    this.client.on(event, listener);
    this.added.push([event, listener]);
  }

  removeAll(): void {
    for (const [event, listener] of this.added.splice(0)) this.client.removeListener(event, listener);
  }
}
