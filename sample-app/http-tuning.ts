import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';

/**
 * Pending-connection queue of the listening socket. Node's default (511) is below the demo's 1,000
 * clients connecting at once; the kernel caps it at net.core.somaxconn anyway.
 */
export const LISTEN_BACKLOG = 4096;

/**
 * Keep-alive idle time, longer than any load generator keeps a connection idle, so the server
 * never closes a socket a client is about to reuse (that race shows up as socket errors). Headers
 * timeout must stay above it, as Node requires.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Applies the keep-alive settings to the app's HTTP server and listens with LISTEN_BACKLOG. */
export async function listenTuned(app: INestApplication, port: number, host: string): Promise<Server> {
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  // Nest passes extra arguments through to http.Server#listen(port, host, backlog, cb); its typings
  // only know (port, host), hence the cast.
  const listen = app.listen.bind(app) as unknown as (
    port: number,
    host: string,
    backlog: number,
  ) => Promise<Server>;
  return listen(port, host, LISTEN_BACKLOG);
}
