/*
 * GraphQL (Apollo on Express): a real Nest app whose mutations carry @DistributedLock() or lock by
 * hand. Parallel mutations on one account serialize; a busy lock, a refused key and a Redis that
 * is down reach the client as GraphQL errors with extensions.code LOCKED (+ retryAfterMs),
 * BAD_USER_INPUT and SERVICE_UNAVAILABLE, with no lock key anywhere in the response (stack traces
 * included) and no ERROR in the log; onBusy: 'skip' on a mutation fails the start-up.
 */
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import type { ExecutionContext, INestApplication } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Args, GraphQLModule, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import { GraphQLError } from 'graphql';
import {
  DistributedLock,
  DistributedLockService,
  DistributedLockTransportInterceptor,
  type LockErrorAnswer,
} from '../../lib';
import { closeApps } from '../support/nest-env';
import { CapturingLogger } from '../support/capturing-logger';
import {
  Ledger,
  LockFixture,
  revealsKey,
  SECRET_EMAIL,
  SECRET_PART,
  startLockFixture,
} from '../support/lock-fixture';

@Resolver()
class AccountResolver {
  constructor(
    private readonly ledger: Ledger,
    private readonly locks: DistributedLockService,
  ) {}

  @Query(() => Int)
  balance(@Args('email') email: string): number {
    return this.ledger.balance(email);
  }

  @Mutation(() => Int)
  @DistributedLock({ key: 'account:{0}', waitMs: 3_000 })
  debit(@Args('email') email: string, @Args('amount', { type: () => Int }) amount: number): Promise<number> {
    return this.ledger.debit(email, amount);
  }

  @Mutation(() => Int)
  @DistributedLock({ key: 'account:{0}', waitMs: 100 })
  debitNow(@Args('email') email: string): Promise<number> {
    return this.ledger.debit(email, 1);
  }

  /** Locks by hand: the same answers as the decorator. */
  @Mutation(() => Int)
  debitByHand(@Args('email') email: string): Promise<number> {
    return this.locks.using(`account:${email}`, { waitMs: 100 }, () => this.ledger.debit(email, 1));
  }
}

@Resolver()
class SkippingResolver {
  @Query(() => Int)
  ping(): number {
    return 1;
  }

  @Mutation(() => Int, { nullable: true })
  @DistributedLock({ key: 'skip', onBusy: 'skip' })
  async skipped(): Promise<number> {
    return 1;
  }
}

// Stack traces on, as in development (Apollo's default outside NODE_ENV production and test): the
// worst case for a key hidden in an error.
const graphql = (): ReturnType<typeof GraphQLModule.forRoot> =>
  GraphQLModule.forRoot<ApolloDriverConfig>({
    driver: ApolloDriver,
    autoSchemaFile: true,
    includeStacktraceInErrorResponses: true,
  });

let fixture: LockFixture;
let app: INestApplication;
let url: string;
const logger = new CapturingLogger();

async function post(query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data?: Record<string, unknown>; errors?: any[] },
  };
}

const DEBIT = 'mutation($email: String!, $amount: Int!) { debit(email: $email, amount: $amount) }';

beforeAll(async () => {
  fixture = await startLockFixture('graphql');
  const moduleRef = await Test.createTestingModule({
    imports: [fixture.module(), graphql()],
    providers: [AccountResolver, Ledger],
  }).compile();
  app = moduleRef.createNestApplication({ logger });
  await app.listen(0, '127.0.0.1');
  url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
});

afterAll(async () => {
  await closeApps(app);
  await fixture?.close();
});

describe('GraphQL (Apollo)', () => {
  it('serializes parallel mutations on one account', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () => post(DEBIT, { email: 'bob@example.com', amount: 5 })),
    );
    expect(results.map((r) => r.body.errors)).toEqual(Array(8).fill(undefined));
    expect(app.get(Ledger).balance('bob@example.com')).toBe(60);
    expect(app.get(Ledger).maxRunning).toBe(1);
    const balances = results.map((r) => r.body.data!.debit as number).sort((a, b) => b - a);
    expect(balances).toEqual([95, 90, 85, 80, 75, 70, 65, 60]);
  });

  it('answers a busy lock with extensions.code LOCKED and retryAfterMs, never the key, and logs no ERROR', async () => {
    const held = await fixture.holdElsewhere(`account:${SECRET_EMAIL}`, 20_000);
    const from = logger.lines.length;
    try {
      for (const field of ['debitNow', 'debitByHand']) {
        const { status, body } = await post(`mutation($email: String!) { ${field}(email: $email) }`, {
          email: SECRET_EMAIL,
        });
        expect(status).toBe(200); // GraphQL over HTTP: execution errors travel in a 200
        expect(body.data).toBeNull();
        expect(body.errors).toHaveLength(1);
        const [error] = body.errors!;
        expect(error.message).toBe('The resource is locked by another request; retry later');
        expect(error.path).toEqual([field]);
        expect(error.extensions.code).toBe('LOCKED');
        // The other replica's fixed lease has ~20 s left: the client is told to come back then.
        expect(error.extensions.retryAfterMs).toBeGreaterThan(10_000);
        expect(error.extensions.retryAfterMs).toBeLessThanOrEqual(20_000);
        // The stack trace is the answer's, not the lock error's (whose message names the key).
        expect(error.extensions.stacktrace?.[0]).toBe(`GraphQLError: ${error.message}`);
        expect(revealsKey(body)).toBe(false);
      }
    } finally {
      await held.release();
    }
    expect(logger.since(from, 'error')).toEqual([]);
    const warns = logger.since(from, 'warn');
    expect(warns).toHaveLength(1); // two busy answers, one rate-limited line
    expect(warns[0]!.message).toContain('Answering LOCKED over graphql');
    // The key is in the operator's log, escaped: the CR/LF cannot start a forged line.
    expect(warns[0]!.message).toContain(`${SECRET_PART}\\r\\nFORGED LOG LINE`);
    expect(warns[0]!.message).not.toMatch(/[\r\n]/);
  });

  it('answers a key refused by validation with BAD_USER_INPUT', async () => {
    const { body } = await post(DEBIT, { email: '', amount: 1 });
    expect(body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors![0].message).toMatch(/account:\{0\}.*empty string/);
  });

  it('answers SERVICE_UNAVAILABLE when the lock Redis is down, without the key', async () => {
    fixture.redis.kill('SIGKILL');
    await fixture.redis.exited;
    const from = logger.lines.length;
    const { status, body } = await post(DEBIT, { email: SECRET_EMAIL, amount: 1 });
    expect(status).toBe(200);
    expect(body.errors![0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.errors![0].message).toBe('The lock service is unavailable; retry later');
    expect(revealsKey(body)).toBe(false);
    // The only ERROR is the connection change the module reports once, not the answer.
    expect(logger.since(from, 'error').filter((l) => !/unreachable/.test(l.message))).toEqual([]);
  });
});

describe('a subclass of DistributedLockTransportInterceptor', () => {
  it('answers instead of the module’s own interceptor, once', async () => {
    class ConflictAnswers extends DistributedLockTransportInterceptor {
      protected override createGraphqlError(_context: ExecutionContext, answer: LockErrorAnswer) {
        const code = answer.code === 'LOCKED' ? 'CONFLICT' : answer.code;
        return new GraphQLError(`conflict: ${answer.message}`, { extensions: { code } });
      }
    }
    const custom = await startLockFixture('graphql-custom');
    const moduleRef = await Test.createTestingModule({
      imports: [custom.module(), graphql()],
      providers: [AccountResolver, Ledger, { provide: APP_INTERCEPTOR, useClass: ConflictAnswers }],
    }).compile();
    const customApp = moduleRef.createNestApplication({ logger: false });
    await customApp.listen(0, '127.0.0.1');
    const held = await custom.holdElsewhere('account:carol@example.com');
    try {
      const res = await fetch(`${(await customApp.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { debitNow(email: "carol@example.com") }' }),
      });
      const body = (await res.json()) as { errors: any[] };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].message).toBe('conflict: The resource is locked by another request; retry later');
      expect(body.errors[0].extensions.code).toBe('CONFLICT');
    } finally {
      await held.release();
      await closeApps(customApp);
      await custom.close();
    }
  });
});

describe("onBusy: 'skip' on a GraphQL resolver", () => {
  it('fails the start-up with a message that names the resolver', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [fixture.module(), graphql()],
      providers: [SkippingResolver],
    }).compile();
    const skipping = moduleRef.createNestApplication({ logger: false });
    await expect(skipping.init()).rejects.toThrow(
      "@DistributedLock({ onBusy: 'skip' }) on the GraphQL resolver SkippingResolver.skipped: a skipped call would answer null",
    );
    await skipping.close();
  });
});
