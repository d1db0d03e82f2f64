/*
 * Microservices, over TCP and over the Redis transport (a broker that runs on this machine): real
 * Nest microservices whose @MessagePattern handlers carry @DistributedLock(), returning a Promise or
 * an Observable. Parallel messages on one account serialize; a busy lock, a refused key and a lock
 * Redis that is down reach the client as the RpcException's error object
 * { status: 'error', code, message, retryAfterMs? } with no lock key in it, and no ERROR is logged
 * for them; onBusy: 'skip' on a message handler fails the start-up.
 */
import { Controller, INestMicroservice, type Type, UseInterceptors } from '@nestjs/common';
import {
  ClientProxy,
  ClientProxyFactory,
  type ClientOptions,
  EventPattern,
  MessagePattern,
  Payload,
  Transport,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom, from, Observable } from 'rxjs';
import { DistributedLock, DistributedLockTransportInterceptor } from '../../lib';
import { getFreePort } from '../support/free-port';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { CapturingLogger } from '../support/capturing-logger';
import {
  expectLockedAnswer,
  Ledger,
  LockFixture,
  SECRET_EMAIL,
  startLockFixture,
} from '../support/lock-fixture';

interface Debit {
  email: string;
  amount: number;
}

@Controller()
class AccountHandlers {
  constructor(private readonly ledger: Ledger) {}

  @MessagePattern('debit')
  @DistributedLock({ key: 'account:{0.email}', waitMs: 3_000 })
  debit(@Payload() data: Debit): Promise<number> {
    return this.ledger.debit(data.email, data.amount);
  }

  @MessagePattern('debit$')
  @DistributedLock({ key: 'account:{0.email}', waitMs: 3_000 })
  debitObservable(@Payload() data: Debit): Observable<number> {
    return from(this.ledger.debit(data.email, data.amount));
  }

  @MessagePattern('debitNow')
  @DistributedLock({ key: 'account:{0.email}', waitMs: 100 })
  debitNow(@Payload() data: Debit): Promise<number> {
    return this.ledger.debit(data.email, data.amount);
  }

  /** Fire-and-forget: skipping a busy event is fine, nobody waits for it. */
  @EventPattern('audit')
  @DistributedLock({ key: 'audit', onBusy: 'skip' })
  async audit(): Promise<void> {}
}

@Controller()
class SkippingHandlers {
  @MessagePattern('skipped')
  @DistributedLock({ key: 'skip', onBusy: 'skip' })
  async skipped(): Promise<number> {
    return 1;
  }
}

interface TransportSetup {
  server: MicroserviceOptions;
  client: ClientOptions;
  stop?: () => Promise<void>;
}
type TransportCase = { name: string; setup: () => Promise<TransportSetup> };

const transports: TransportCase[] = [
  {
    name: 'TCP',
    setup: async (): Promise<TransportSetup> => {
      const port = await getFreePort();
      const options = { host: '127.0.0.1', port };
      return {
        server: { transport: Transport.TCP, options },
        client: { transport: Transport.TCP, options },
      };
    },
  },
  {
    name: 'Redis transport',
    setup: async (): Promise<TransportSetup> => {
      const broker: RedisServerProcess = await startRedis();
      const options = { host: '127.0.0.1', port: broker.port };
      return {
        server: { transport: Transport.REDIS, options },
        client: { transport: Transport.REDIS, options },
        stop: () => broker.stop(),
      };
    },
  },
];

/** What the client's Observable errors with (the RpcException's error object, as sent). */
async function sendError(client: ClientProxy, pattern: string, data: unknown): Promise<any> {
  return firstValueFrom(client.send(pattern, data)).then(
    (value) => {
      throw new Error(`expected an error, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe.each(transports)('microservices over $name', ({ setup }) => {
  let fixture: LockFixture;
  let service: INestMicroservice;
  let client: ClientProxy;
  let stopTransport: (() => Promise<void>) | undefined;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    fixture = await startLockFixture('rpc');
    const transport = await setup();
    stopTransport = transport.stop;
    const moduleRef = await Test.createTestingModule({
      imports: [fixture.module()],
      controllers: [AccountHandlers],
      providers: [Ledger],
    }).compile();
    service = moduleRef.createNestMicroservice<MicroserviceOptions>({ ...transport.server, logger });
    await service.listen();
    client = ClientProxyFactory.create(transport.client);
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await service?.close();
    await stopTransport?.();
    await fixture?.close();
  });

  it('serializes parallel messages on one account, for Promise and Observable handlers', async () => {
    const sends = Array.from({ length: 8 }, (_, i) =>
      firstValueFrom(
        client.send<number>(i % 2 ? 'debit$' : 'debit', { email: 'bob@example.com', amount: 5 }),
      ),
    );
    const balances = (await Promise.all(sends)).sort((a, b) => b - a);
    expect(balances).toEqual([95, 90, 85, 80, 75, 70, 65, 60]);
    expect(service.get(Ledger).maxRunning).toBe(1);
  });

  it('answers a busy lock with { code: LOCKED, retryAfterMs }, never the key, and logs no ERROR', async () => {
    await expectLockedAnswer(fixture, logger, 'rpc', () =>
      sendError(client, 'debitNow', { email: SECRET_EMAIL, amount: 1 }),
    );
  });

  it('answers a message whose key part is missing with BAD_USER_INPUT', async () => {
    const error = await sendError(client, 'debit', { amount: 1 });
    expect(error).toMatchObject({ status: 'error', code: 'BAD_USER_INPUT' });
    expect(error.message).toMatch(/account:\{0\.email\}/);
  });

  it('answers SERVICE_UNAVAILABLE when the lock Redis is down, without the key', async () => {
    fixture.redis.kill('SIGKILL');
    await fixture.redis.exited;
    const from = logger.lines.length;
    const error = await sendError(client, 'debit', { email: SECRET_EMAIL, amount: 1 });
    expect(error).toEqual({
      status: 'error',
      code: 'SERVICE_UNAVAILABLE',
      message: 'The lock service is unavailable; retry later',
    });
    expect(logger.since(from, 'error').filter((l) => !/unreachable/.test(l.message))).toEqual([]);
  });
});

/**
 * Runs `check` against a TCP microservice of `controllers` on a lock fixture of its own (module
 * options `extra`) while another replica holds `account:<email>`; closes everything afterwards.
 */
async function whileAccountBusy(
  name: string,
  extra: Record<string, unknown>,
  controllers: Type[],
  email: string,
  check: (client: ClientProxy) => Promise<void>,
): Promise<void> {
  const fixture = await startLockFixture(name);
  const options = { host: '127.0.0.1', port: await getFreePort() };
  const moduleRef = await Test.createTestingModule({
    imports: [fixture.module(extra)],
    controllers,
    providers: [Ledger],
  }).compile();
  const service = moduleRef.createNestMicroservice<MicroserviceOptions>({
    transport: Transport.TCP,
    options,
    logger: false,
  });
  await service.listen();
  const client = ClientProxyFactory.create({ transport: Transport.TCP, options });
  const held = await fixture.holdElsewhere(`account:${email}`);
  try {
    await check(client);
  } finally {
    await held.release();
    await client.close();
    await service.close();
    await fixture.close();
  }
}

describe('transportErrors: false', () => {
  it('leaves lock errors to Nest (and to an interceptor of your own)', async () => {
    await whileAccountBusy(
      'rpc-off',
      { transportErrors: false },
      [AccountHandlers],
      'off@example.com',
      async (client) => {
        const error = await sendError(client, 'debitNow', { email: 'off@example.com', amount: 1 });
        expect(error).toEqual({ status: 'error', message: 'Internal server error' });
      },
    );
  });
});

@Controller()
class OwnInterceptorHandlers {
  @MessagePattern('own')
  @UseInterceptors(DistributedLockTransportInterceptor)
  @DistributedLock({ key: 'account:{0.email}', waitMs: 100 })
  debit(@Payload() data: Debit): Promise<number> {
    return Promise.resolve(data.amount);
  }
}

describe('transportErrors: false, with an interceptor of your own', () => {
  it('your DistributedLockTransportInterceptor still answers LOCKED; the module’s stand aside', async () => {
    const controllers = [AccountHandlers, OwnInterceptorHandlers];
    await whileAccountBusy(
      'rpc-off-own',
      { transportErrors: false },
      controllers,
      'own@example.com',
      async (client) => {
        const own = await sendError(client, 'own', { email: 'own@example.com', amount: 1 });
        expect(own).toMatchObject({ status: 'error', code: 'LOCKED' });
        const bare = await sendError(client, 'debitNow', { email: 'own@example.com', amount: 1 });
        expect(bare).toEqual({ status: 'error', message: 'Internal server error' });
      },
    );
  });
});

describe('retryAfter outside HTTP', () => {
  it.each([
    ['a number of seconds', 3, 3000],
    ['a function of the error', () => 2, 2000],
    ['false', false, undefined],
  ] as const)('sets retryAfterMs in the RPC answer from %s', async (_label, retryAfter, expected) => {
    await whileAccountBusy(
      'rpc-retry-after',
      { retryAfter },
      [AccountHandlers],
      'later@example.com',
      async (client) => {
        const error = await sendError(client, 'debitNow', { email: 'later@example.com', amount: 1 });
        expect(error).toMatchObject({ status: 'error', code: 'LOCKED' });
        expect(error.retryAfterMs).toBe(expected);
      },
    );
  });
});

describe("onBusy: 'skip' on a message handler", () => {
  it('fails the start-up with a message that names the handler', async () => {
    const fixture = await startLockFixture('rpc-skip');
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [fixture.module()],
        controllers: [SkippingHandlers],
      }).compile();
      const service = moduleRef.createNestMicroservice<MicroserviceOptions>({
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port: await getFreePort() },
        logger: false,
      });
      // (NestMicroservice.init() may throw before it returns its promise.)
      await expect((async () => service.init())()).rejects.toThrow(
        "@DistributedLock({ onBusy: 'skip' }) on the message handler SkippingHandlers.skipped: the client waits for an answer",
      );
      // close() re-throws the failed init; nothing was connected (the engine connects on first use).
      await service.close().catch(() => undefined);
    } finally {
      await fixture.close();
    }
  });
});
