import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import type { WakeupSubscriber } from '../redis-door';

/**
 * Sharded pub/sub on an iovalkey Cluster, which (0.4) has no sharded subscribers of its own: its
 * one subscriber connection sits on one master, so SSUBSCRIBE for a slot of another master was
 * refused and those waiters woke only by polling. Here each shard channel is SSUBSCRIBEd on a
 * connection to the master that owns its slot (one connection per master in use, opened on
 * demand); plain SUBSCRIBE (which every node delivers) uses one connection to any master. After a
 * connection comes back (failover, restart), its channels are subscribed again on whichever master
 * owns their slots by then; waiters poll meanwhile.
 */
export class ValkeyShardedSubscriber implements WakeupSubscriber {
  /** One connection per master address ("host:port"); `*` for plain channels. */
  private readonly connections = new Map<string, WakeupSubscriber>();
  /** Shard channel → the address it was subscribed on. */
  private readonly placed = new Map<string, string>();
  /** Plain channels (force-release notices), on the `*` connection. */
  private readonly plain = new Set<string>();
  private readonly listeners: ((channel: string, message: string) => void)[] = [];
  private closed = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly open: (node: Redis) => WakeupSubscriber,
  ) {}

  async subscribe(channel: string, sharded: boolean): Promise<void> {
    if (!sharded) {
      this.plain.add(channel);
      return this.connection('*').subscribe(channel, false);
    }
    const address = this.ownerOf(channel);
    this.placed.set(channel, address);
    await this.connection(address).subscribe(channel, true);
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<void> {
    if (!sharded) {
      this.plain.delete(channel);
      return this.connections.get('*')?.unsubscribe(channel, false);
    }
    const address = this.placed.get(channel);
    this.placed.delete(channel);
    if (address !== undefined) await this.connections.get(address)?.unsubscribe(channel, true);
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.listeners.push(listener);
    for (const connection of this.connections.values()) connection.onMessage(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.connections.values()];
    this.connections.clear();
    this.placed.clear();
    this.plain.clear();
    await Promise.all(all.map((c) => c.close()));
  }

  private ownerOf(channel: string): string {
    const owner = this.cluster.slots[calculateSlot(channel)]?.[0];
    return owner ?? this.anyMaster();
  }

  private anyMaster(): string {
    const node = this.cluster.nodes('master')[0];
    if (!node) throw new Error('The Cluster has no master to subscribe on (not connected yet)');
    return `${node.options.host}:${node.options.port}`;
  }

  private connection(address: string): WakeupSubscriber {
    let connection = this.connections.get(address);
    if (connection) return connection;
    const target = address === '*' ? this.anyMaster() : address;
    const node = this.cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === target);
    if (!node) throw new Error(`No connection to the Cluster master ${target}`);
    connection = this.open(node);
    for (const listener of this.listeners) connection.onMessage(listener);
    const opened = connection;
    opened.onReconnect?.(() => this.replace(address, opened));
    this.connections.set(address, opened);
    return opened;
  }

  /** After a reconnect: subscribe the connection's channels again where their slots live now. */
  private replace(address: string, connection: WakeupSubscriber): void {
    if (this.closed || this.connections.get(address) !== connection) return;
    const ignore = (): undefined => undefined; // waiters poll until a later reconnect succeeds
    if (address === '*') {
      for (const channel of this.plain) connection.subscribe(channel, false).catch(ignore);
      return;
    }
    for (const [channel, at] of this.placed) {
      if (at !== address) continue;
      const owner = this.ownerOf(channel);
      this.placed.set(channel, owner);
      if (owner !== address) connection.unsubscribe(channel, true).catch(ignore);
      this.connection(owner).subscribe(channel, true).catch(ignore);
    }
  }
}
