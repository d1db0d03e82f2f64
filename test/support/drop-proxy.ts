import * as net from 'net';
import { LOCALHOST } from './free-port';

/**
 * A TCP proxy in front of one redis-server that can lose a reply on purpose: once armed with a
 * command name, the next connection that sends that command has the server's reply swallowed and
 * both of its sockets destroyed. The command has run on the server; the client never hears of it
 * ("connection dropped after the server executed it"), which CLIENT KILL cannot produce.
 */
export class DropProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private armed?: { command: Buffer; onDrop: () => void };
  /** Replies swallowed so far. */
  dropped = 0;

  private constructor(private readonly targetPort: number) {
    this.server = net.createServer((client) => this.pipe(client));
  }

  /** Starts a proxy on a free port of 127.0.0.1 in front of `targetPort`. */
  static async start(targetPort: number): Promise<DropProxy> {
    const proxy = new DropProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, LOCALHOST, resolve));
    return proxy;
  }

  /** The port clients connect to. */
  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Swallows the reply to the next `command` (e.g. 'evalsha') and cuts that connection; resolves when it did. */
  dropNextReplyTo(command: string): Promise<void> {
    return new Promise((resolve) => {
      const name = command.toLowerCase();
      this.armed = { command: Buffer.from(`$${name.length}\r\n${name}\r\n`), onDrop: resolve };
    });
  }

  /** Closes the listener and every proxied connection. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: net.Socket): void {
    const upstream = net.connect({ port: this.targetPort, host: LOCALHOST });
    this.sockets.add(client).add(upstream);
    let cutOnReply: (() => void) | undefined;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => {
      const armed = this.armed;
      if (
        armed &&
        !cutOnReply &&
        chunk.toString('latin1').toLowerCase().includes(armed.command.toString('latin1'))
      ) {
        this.armed = undefined;
        cutOnReply = armed.onDrop;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (cutOnReply) {
        this.dropped++;
        cut();
        cutOnReply();
        return;
      }
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', cut);
      s.on('close', () => {
        this.sockets.delete(s);
        cut();
      });
    }
  }
}
