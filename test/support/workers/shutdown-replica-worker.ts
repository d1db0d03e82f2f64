/*
 * One replica of a locked HTTP service, as its own OS process, for the SIGTERM spec
 * (test/faults/shutdown-sigterm.spec.ts): a real Nest 11 app on Express or Fastify with
 * `app.enableShutdownHooks()`, as a container runs it. The process is stopped only by a signal.
 *
 * POST /hold/:key takes the lock `job:<key>` (waitMs 30 s), holds it HOLD_MS, then commits: RPUSHes
 * `<request id>` to `<PREFIX>commits` (the request id is the `x-request-id` header) and answers 201.
 *
 * Env: REDIS_URL, PREFIX (the lock prefix and the commit list's), PLATFORM ('express' | 'fastify'),
 * HOLD_MS, CLOSE_KEEP_ALIVE ('1': the README's ConnectionCloseOnShutdown provider is in the app).
 * Messages (stdout, one JSON line each; epochMs() clock, comparable across processes on this host):
 *   {type:'listening', port, pid}
 *   {type:'acquired'|'released'|'contended', key, at}   the lock service's own events
 *   {type:'section-end', key, at}           a critical section committed (its lock is released next)
 *   {type:'sigterm', at}                    the signal arrived
 *   {type:'http-closing', at}               beforeApplicationShutdown: Nest closes HTTP next
 *   {type:'locks-closing', at}              onApplicationShutdown: HTTP is closed, the lock service closes
 */
import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  type BeforeApplicationShutdown,
  Controller,
  Headers,
  HttpCode,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  Param,
  Post,
} from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../../lib';
import { epochMs } from '../clock';
import { emit, requiredEnv } from '../worker-io';

const redisUrl = requiredEnv('REDIS_URL');
const prefix = requiredEnv('PREFIX');
const platform = requiredEnv('PLATFORM');
const holdMs = Number(requiredEnv('HOLD_MS'));
const data = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

@Controller('hold')
class HoldController {
  @Post(':key')
  @HttpCode(201)
  @DistributedLock({ key: 'job:{0}', waitMs: 30_000 })
  async hold(@Param('key') key: string, @Headers('x-request-id') id: string): Promise<{ committed: string }> {
    await sleep(holdMs);
    await data.rpush(`${prefix}commits`, id);
    // The lock is released after this returns: no other process can be granted it before this moment.
    emit({ type: 'section-end', key: `job:${key}`, at: epochMs() });
    return { committed: id };
  }
}

/** Reports the app's shutdown steps, and the lock service's grants and releases. */
@Injectable()
class Reporter implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(private readonly locks: DistributedLockService) {}

  onApplicationBootstrap(): void {
    this.locks.events.on('acquired', ({ key }) => emit({ type: 'acquired', key, at: epochMs() }));
    this.locks.events.on('released', ({ key }) => emit({ type: 'released', key, at: epochMs() }));
    this.locks.events.on('contended', ({ key }) => emit({ type: 'contended', key, at: epochMs() }));
  }

  beforeApplicationShutdown(): void {
    emit({ type: 'http-closing', at: epochMs() });
  }

  async onApplicationShutdown(): Promise<void> {
    emit({ type: 'locks-closing', at: epochMs() });
    await data.quit();
  }
}

/**
 * The README's "Shutdown" provider, as written there: once the app begins to close, answers in flight
 * carry `Connection: close`, so a keep-alive client lets go of its connection after its answer and the
 * HTTP server's close() can end.
 */
@Injectable()
export class ConnectionCloseOnShutdown implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private closing = false;
  private readonly answering = new Set<ServerResponse>();

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onApplicationBootstrap(): void {
    const server: Server = this.adapterHost.httpAdapter.getHttpServer();
    server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
      if (this.closing) return void response.setHeader('Connection', 'close');
      this.answering.add(response);
      response.once('close', () => this.answering.delete(response));
    });
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const response of this.answering) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }
  }
}

@Module({
  imports: [DistributedLockModule.forRoot({ redis: redisUrl, keyPrefix: `${prefix}lock:` })],
  controllers: [HoldController],
  providers: [Reporter, ...(process.env.CLOSE_KEEP_ALIVE === '1' ? [ConnectionCloseOnShutdown] : [])],
})
class ReplicaModule {}

async function main(): Promise<void> {
  const app =
    platform === 'fastify'
      ? await NestFactory.create(ReplicaModule, new FastifyAdapter(), { logger: ['error', 'warn'] })
      : await NestFactory.create(ReplicaModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  // Nest's own SIGTERM listener closes the app, then sends the signal again to end the process; this
  // one only notes the arrival (once: the second signal must find no listener but Nest's, removed by then).
  process.once('SIGTERM', () => emit({ type: 'sigterm', at: epochMs() }));
  await app.listen(0, '127.0.0.1');
  const address = (app.getHttpServer() as Server).address();
  emit({
    type: 'listening',
    port: typeof address === 'object' && address ? address.port : 0,
    pid: process.pid,
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
