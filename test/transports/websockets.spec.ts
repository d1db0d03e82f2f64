/*
 * WebSockets, on @nestjs/platform-ws and on socket.io: a real Nest gateway whose messages carry
 * @DistributedLock(). Parallel messages on one account serialize; a busy lock, a refused key and a
 * lock Redis that is down reach the client as the WsException's error object
 * { status: 'error', code, message, retryAfterMs? } (the `exception` event) with no lock key in
 * it, and no ERROR is logged for them.
 */
import { type INestApplication, UseFilters } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway, type WsResponse } from '@nestjs/websockets';
import { io, type Socket } from 'socket.io-client';
import WebSocket from 'ws';
import { DistributedLock } from '../../lib';
import { closeApps } from '../support/nest-env';
import { CapturingLogger } from '../support/capturing-logger';
import {
  expectLockedAnswer,
  Ledger,
  LockFixture,
  SECRET_EMAIL,
  startLockFixture,
} from '../support/lock-fixture';
import { NativeWsExceptionFilter } from '../support/native-ws-exception.filter';

interface Debit {
  id: number;
  email: string;
  amount: number;
}
type Debited = WsResponse<{ id: number; balance: number }>;

// Nest applies no global filter to gateways: the platform-ws recipe is bound here.
@WebSocketGateway()
@UseFilters(NativeWsExceptionFilter)
class AccountGateway {
  constructor(private readonly ledger: Ledger) {}

  @SubscribeMessage('debit')
  @DistributedLock({ key: 'account:{0.email}', waitMs: 3_000 })
  async debit(@MessageBody() data: Debit): Promise<Debited> {
    return {
      event: 'debited',
      data: { id: data.id, balance: await this.ledger.debit(data.email, data.amount) },
    };
  }

  @SubscribeMessage('debitNow')
  @DistributedLock({ key: 'account:{0.email}', waitMs: 100 })
  async debitNow(@MessageBody() data: Debit): Promise<Debited> {
    return {
      event: 'debited',
      data: { id: data.id, balance: await this.ledger.debit(data.email, data.amount) },
    };
  }
}

/** A client that sends `{ event, data }` and hands over every event the server sends. */
interface TestClient {
  send(event: string, data: unknown): void;
  next(event: string): Promise<any>;
  close(): void;
}

function collector() {
  const queues = new Map<string, any[]>();
  const waiting = new Map<string, ((value: any) => void)[]>();
  return {
    push(event: string, data: unknown) {
      const waiter = waiting.get(event)?.shift();
      if (waiter) waiter(data);
      else queues.set(event, [...(queues.get(event) ?? []), data]);
    },
    next(event: string): Promise<any> {
      const queued = queues.get(event)?.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      return new Promise((resolve) => waiting.set(event, [...(waiting.get(event) ?? []), resolve]));
    },
  };
}

async function nativeClient(url: string): Promise<TestClient> {
  const socket = new WebSocket(url.replace('http', 'ws'));
  const events = collector();
  socket.on('message', (raw) => {
    const { event, data } = JSON.parse(String(raw)) as { event: string; data: unknown };
    events.push(event, data);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    send: (event, data) => socket.send(JSON.stringify({ event, data })),
    next: events.next,
    close: () => socket.close(),
  };
}

async function socketIoClient(url: string): Promise<TestClient> {
  const socket: Socket = io(url, { transports: ['websocket'], reconnection: false });
  const events = collector();
  socket.onAny((event: string, data: unknown) => events.push(event, data));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return {
    send: (event, data) => void socket.emit(event, data),
    next: events.next,
    close: () => void socket.close(),
  };
}

const platforms = [
  { name: 'platform-ws', adapter: (app: INestApplication) => new WsAdapter(app), connect: nativeClient },
  { name: 'socket.io', adapter: (app: INestApplication) => new IoAdapter(app), connect: socketIoClient },
];

describe.each(platforms)('WebSockets on $name', ({ adapter, connect }) => {
  let fixture: LockFixture;
  let app: INestApplication;
  let client: TestClient;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    fixture = await startLockFixture('ws');
    const moduleRef = await Test.createTestingModule({
      imports: [fixture.module()],
      providers: [AccountGateway, Ledger],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    app.useWebSocketAdapter(adapter(app));
    await app.listen(0, '127.0.0.1');
    client = await connect((await app.getUrl()).replace('[::1]', '127.0.0.1'));
  });

  afterAll(async () => {
    client?.close();
    await closeApps(app);
    await fixture?.close();
  });

  it('serializes parallel messages on one account', async () => {
    for (let id = 0; id < 8; id++) client.send('debit', { id, email: 'bob@example.com', amount: 5 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => client.next('debited')));
    expect(answers.map((a) => a.id).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(answers.map((a) => a.balance).sort((a, b) => b - a)).toEqual([95, 90, 85, 80, 75, 70, 65, 60]);
    expect(app.get(Ledger).maxRunning).toBe(1);
  });

  it('answers a busy lock with { code: LOCKED, retryAfterMs }, never the key, and logs no ERROR', async () => {
    await expectLockedAnswer(fixture, logger, 'ws', () => {
      client.send('debitNow', { id: 100, email: SECRET_EMAIL, amount: 1 });
      return client.next('exception');
    });
  });

  it('answers a message whose key part is missing with BAD_USER_INPUT', async () => {
    client.send('debit', { id: 101, amount: 1 });
    const error = await client.next('exception');
    expect(error).toMatchObject({ status: 'error', code: 'BAD_USER_INPUT' });
    expect(error.message).toMatch(/account:\{0\.email\}/);
  });

  it('answers SERVICE_UNAVAILABLE when the lock Redis is down, without the key', async () => {
    fixture.redis.kill('SIGKILL');
    await fixture.redis.exited;
    const from = logger.lines.length;
    client.send('debit', { id: 102, email: SECRET_EMAIL, amount: 1 });
    const error = await client.next('exception');
    expect(error).toEqual({
      status: 'error',
      code: 'SERVICE_UNAVAILABLE',
      message: 'The lock service is unavailable; retry later',
    });
    expect(logger.since(from, 'error').filter((l) => !/unreachable/.test(l.message))).toEqual([]);
  });
});
