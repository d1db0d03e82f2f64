import { DistributedLock, DistributedLockOptions, LockError } from '../../lib';

/** Defines a class whose method carries @DistributedLock(options): this is "decoration time". */
function decorate(options: unknown): void {
  class Jobs {
    @DistributedLock(options as DistributedLockOptions)
    async run(_id: string, _user?: { id: string }, _more?: unknown): Promise<void> {}
  }
  void Jobs;
}

describe('@DistributedLock() options checked at decoration time', () => {
  it.each<[string, unknown, ErrorConstructor, RegExp]>([
    ['no options', undefined, TypeError, /Jobs\.run needs an options object/],
    [
      'a missing key',
      {},
      TypeError,
      /"key" must be a non-empty template string or a function, got undefined/,
    ],
    ['an empty key', { key: '' }, TypeError, /"key" must be a non-empty/],
    ['a number as key', { key: 42 }, TypeError, /"key" must be .* got number 42/],
    ['an invalid placeholder', { key: 'order:{id}' }, TypeError, /invalid placeholder \{id\}/],
    ['an unmatched brace', { key: 'order:{0' }, TypeError, /unmatched "\{" or "\}"/],
    [
      'an unknown option',
      { key: 'k', wait: 10 },
      TypeError,
      /Unknown option "wait" in @DistributedLock\(\) options on Jobs\.run/,
    ],
    ['NaN waitMs', { key: 'k', waitMs: NaN }, RangeError, /waitMs must be finite/],
    ['negative waitMs', { key: 'k', waitMs: -1 }, RangeError, /waitMs must be at least 0/],
    ['fractional leaseMs', { key: 'k', leaseMs: 1.5 }, RangeError, /leaseMs must be a whole number/],
    ['Infinity leaseMs', { key: 'k', leaseMs: Infinity }, RangeError, /leaseMs must be finite/],
    ['zero leaseMs', { key: 'k', leaseMs: 0 }, RangeError, /leaseMs must be at least 1/],
    ['a string waitMs', { key: 'k', waitMs: '10' }, TypeError, /waitMs must be a number/],
    ['an unknown onBusy', { key: 'k', onBusy: 'wait' }, TypeError, /onBusy must be 'throw' or 'skip'/],
    ['two lock kinds at once', { key: 'k', mode: 'read', limit: 2 }, TypeError, /at most one of them/],
  ])('refuses %s', (_name, options, errorClass, message) => {
    let thrown: unknown;
    try {
      decorate(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(errorClass);
    expect((thrown as Error).message).toMatch(message);
  });

  it('refuses to decorate a property, a getter or a class', () => {
    const asAny = DistributedLock({ key: 'k' }) as unknown as (...args: unknown[]) => void;
    expect(() => {
      class WithProperty {
        @(asAny as PropertyDecorator) name = 'x';
      }
      void WithProperty;
    }).toThrow(/can only decorate methods; WithProperty\.name is not a method/);
    expect(() => {
      class WithGetter {
        // @ts-expect-error a getter is not a lockable method: refused by the compiler and at run time
        @DistributedLock({ key: 'k' })
        get value(): number {
          return 1;
        }
      }
      void WithGetter;
    }).toThrow(TypeError);
    expect(() => {
      @(asAny as ClassDecorator)
      class Whole {}
      void Whole;
    }).toThrow(/can only decorate methods; class Whole is not a method/);
  });

  it('accepts every documented option', () => {
    expect(() =>
      decorate({ key: (id: string) => `k:${id}`, waitMs: 0, leaseMs: 500, onBusy: 'skip', reentrant: false }),
    ).not.toThrow();
    expect(() => decorate({ key: 'user:{0}:{1.id}:{2.a.b}', mode: 'write' })).not.toThrow();
  });

  it('takes several keys from a key function only in an array key (the compiler refuses a lone one)', () => {
    class Accounts {
      // @ts-expect-error a lone key function returns one key: several are declared as `key: [fn]`
      @DistributedLock({ key: (from: string, to: string) => [`acct:${from}`, `acct:${to}`] })
      async lone(from: string, to: string): Promise<string> {
        return from + to;
      }

      @DistributedLock({ key: [(from: string, to: string) => [`acct:${from}`, `acct:${to}`]] })
      async listed(from: string, to: string): Promise<string> {
        return from + to;
      }
    }
    expect(typeof Accounts.prototype.listed).toBe('function');
  });
});

describe('a decorated method called without an initialised module', () => {
  it('rejects with an actionable message instead of running unlocked', async () => {
    let ran = false;
    class Standalone {
      @DistributedLock({ key: 'x:{0}' })
      async work(_id: string): Promise<void> {
        ran = true;
      }
    }
    const call = new Standalone().work('1');
    await expect(call).rejects.toBeInstanceOf(LockError);
    await expect(call).rejects.toThrow(
      'DistributedLockModule not initialised — did you import DistributedLockModule.forRoot() and call app.init()?',
    );
    expect(ran).toBe(false);
  });
});
