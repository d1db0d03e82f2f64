import * as net from 'net';
import { LOCALHOST } from './free-port';

/** Which way a fault applies: client → server, server → client, or both. */
export type ProxyDirection = 'to-server' | 'to-client' | 'both';

/**
 * A TCP proxy on loopback in front of one server, with network faults on demand (RELIABILITY.md
 * scenario 18):
 * - `blackhole(direction)`: bytes stop flowing that way but the connections stay open, as in a
 *   partition; what was sent meanwhile is held back (TCP would retransmit it) and delivered, in
 *   order, on `heal()`, so a protocol stream never desynchronises;
 * - `latency(ms, jitterMs)`: every chunk is delayed (order kept);
 * - `reset()`: every open connection is reset (RST) mid-stream;
 * - `refuse(true)`: new connections are reset as soon as they are accepted;
 * - `dropNextReplyTo(command)`: the next such command reaches the server and runs, its reply is
 *   swallowed and that connection is cut ("connection dropped after the server executed it", which
 *   CLIENT KILL cannot produce);
 * - `heal()`: all of that stops.
 */
export class TcpProxy {
  private readonly server: net.Server;
  private readonly links = new Set<Link>();
  private holding = { 'to-server': false, 'to-client': false };
  private delay = { ms: 0, jitterMs: 0 };
  private refusing = false;
  private armed?: { marker: string; onDrop: () => void };
  /** Replies swallowed by dropNextReplyTo() so far. */
  dropped = 0;

  private constructor(private readonly targetPort: number) {
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Starts a proxy on a free port of 127.0.0.1 in front of `targetPort`. */
  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, LOCALHOST, resolve));
    return proxy;
  }

  /** The port clients connect to. */
  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** `redis://127.0.0.1:<port>` of the proxy. */
  get url(): string {
    return `redis://${LOCALHOST}:${this.port}`;
  }

  /** Open proxied connections. */
  get connections(): number {
    return this.links.size;
  }

  /** Stops bytes flowing `direction` (held back until heal()); connections stay open. */
  blackhole(direction: ProxyDirection = 'both'): void {
    if (direction !== 'to-client') this.holding['to-server'] = true;
    if (direction !== 'to-server') this.holding['to-client'] = true;
  }

  /** Delays every chunk by `ms` plus a random 0..`jitterMs`, both ways, keeping order. */
  latency(ms: number, jitterMs = 0): void {
    this.delay = { ms, jitterMs };
  }

  /** Resets every open connection (the client sees ECONNRESET). */
  reset(): void {
    for (const link of [...this.links]) link.reset();
  }

  /** While on, every new connection is reset at once. */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  /** Swallows the reply to the next `command` (e.g. 'evalsha') and cuts that connection; resolves when it did. */
  dropNextReplyTo(command: string): Promise<void> {
    const name = command.toLowerCase();
    return new Promise((resolve) => {
      this.armed = { marker: `$${name.length}\r\n${name}\r\n`, onDrop: resolve };
    });
  }

  /** Ends every fault: held-back bytes are delivered, no more delay or refusal. */
  heal(): void {
    this.holding = { 'to-server': false, 'to-client': false };
    this.delay = { ms: 0, jitterMs: 0 };
    this.refusing = false;
    for (const link of this.links) link.flush();
  }

  /** Closes the listener and every proxied connection (no reset: see Link.reset). */
  async close(): Promise<void> {
    for (const link of [...this.links]) link.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** @internal */
  isHolding(direction: 'to-server' | 'to-client'): boolean {
    return this.holding[direction];
  }

  /** @internal Whether `chunk`, going `direction` on `link`, goes on (false: a reply dropNextReplyTo() swallows). */
  screen(link: Link, direction: 'to-server' | 'to-client', chunk: Buffer): boolean {
    const armed = this.armed;
    if (direction === 'to-server') {
      if (armed && !link.cutOnReply && chunk.toString('latin1').toLowerCase().includes(armed.marker)) {
        this.armed = undefined;
        link.cutOnReply = armed.onDrop;
      }
      return true;
    }
    const onDrop = link.cutOnReply;
    if (!onDrop) return true;
    link.cutOnReply = undefined;
    this.dropped++;
    link.cut();
    onDrop();
    return false;
  }

  /** @internal */
  nextDelayMs(): number {
    const { ms, jitterMs } = this.delay;
    return ms + (jitterMs > 0 ? Math.random() * jitterMs : 0);
  }

  private accept(client: net.Socket): void {
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    const link = new Link(this, client, net.connect({ port: this.targetPort, host: LOCALHOST }));
    this.links.add(link);
    link.onClose = () => this.links.delete(link);
  }
}

/** One proxied connection: the client's socket and the upstream socket, piped both ways. */
class Link {
  onClose?: () => void;
  /** Set by dropNextReplyTo(): the next reply on this link is swallowed, then this is called. */
  cutOnReply?: () => void;
  private readonly pipes: Pipe[];
  private closed = false;

  constructor(
    proxy: TcpProxy,
    private readonly client: net.Socket,
    private readonly upstream: net.Socket,
  ) {
    this.pipes = [
      new Pipe(proxy, this, 'to-server', client, upstream),
      new Pipe(proxy, this, 'to-client', upstream, client),
    ];
    const close = () => {
      if (this.closed) return;
      this.closed = true;
      for (const pipe of this.pipes) pipe.stop();
      client.destroy();
      upstream.destroy();
      this.onClose?.();
    };
    // A side that ends in order (QUIT, FIN) ends the other side once the bytes still delayed on
    // their way there are delivered, as TCP would; an error (reset) cuts both at once.
    const [toServer, toClient] = this.pipes as [Pipe, Pipe];
    client.on('end', () => toServer.drainThen(() => upstream.end()));
    upstream.on('end', () => toClient.drainThen(() => client.end()));
    for (const s of [client, upstream]) {
      s.on('error', close);
      s.on('close', () => (toServer.idle && toClient.idle ? close() : undefined));
    }
    for (const pipe of this.pipes) pipe.onIdle = () => (client.destroyed || upstream.destroyed) && close();
  }

  flush(): void {
    for (const pipe of this.pipes) pipe.flush();
  }

  /** Closes both sockets at once (no reset), dropping whatever is on its way. */
  cut(): void {
    this.client.destroy();
    this.upstream.destroy();
  }

  /**
   * Resets both sockets (the peers see ECONNRESET). A socket already ending (end() called: its
   * shutdown is pending) is destroyed instead: libuv refuses to reset it (uv_tcp_close_reset: EINVAL),
   * Node (20.20) then never closes its handle, and the process spins at exit waiting for it. That was
   * a Jest worker that never exited ("failed to exit gracefully") and kept a core busy meanwhile.
   */
  reset(): void {
    for (const socket of [this.client, this.upstream]) {
      if (socket.destroyed) continue;
      if (socket.writableEnded) socket.destroy();
      else socket.resetAndDestroy();
    }
  }
}

/** One direction of a link: holds chunks back while blackholed, delays them with latency. */
class Pipe {
  private readonly held: Buffer[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** When the last delayed chunk goes out: later chunks never overtake it. */
  private lastOutAt = 0;

  constructor(
    private readonly proxy: TcpProxy,
    private readonly link: Link,
    private readonly direction: 'to-server' | 'to-client',
    from: net.Socket,
    private readonly to: net.Socket,
  ) {
    from.on('data', (chunk: Buffer) => this.carry(chunk));
  }

  /** Called when nothing is delayed or held back any more. */
  onIdle?: () => void;
  private afterDrain?: () => void;

  /** True when no chunk is delayed or held back. */
  get idle(): boolean {
    return this.timers.size === 0 && this.held.length === 0;
  }

  /** Runs `fn` once every delayed chunk went out (at once when none is pending). */
  drainThen(fn: () => void): void {
    if (this.timers.size === 0) fn();
    else this.afterDrain = fn;
  }

  flush(): void {
    const chunks = this.held.splice(0);
    for (const chunk of chunks) this.carry(chunk);
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.held.length = 0;
  }

  private carry(chunk: Buffer): void {
    if (!this.proxy.screen(this.link, this.direction, chunk)) return;
    if (this.proxy.isHolding(this.direction)) {
      this.held.push(chunk);
      return;
    }
    const now = performance.now();
    const outAt = Math.max(now + this.proxy.nextDelayMs(), this.lastOutAt);
    if (outAt <= now) {
      this.write(chunk);
      return;
    }
    this.lastOutAt = outAt;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.write(chunk);
      if (this.timers.size > 0) return;
      const after = this.afterDrain;
      this.afterDrain = undefined;
      after?.();
      if (this.idle) this.onIdle?.();
    }, outAt - now);
    this.timers.add(timer);
  }

  private write(chunk: Buffer): void {
    if (!this.to.destroyed && this.to.writable) this.to.write(chunk);
  }
}
