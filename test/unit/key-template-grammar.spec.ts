/*
 * Unit: the key template grammar exactly as docs/API.md ("Key templates") states it — what a
 * placeholder may name, what is refused when the class is defined, and the message and error class of
 * each refusal when the method is called. Beside lock-key-template.spec.ts, which covers the builder's
 * behaviour; this file pins the documented cases one by one.
 */
import { compileLockKey } from '../../lib/nest/lock-key-template';
import { isLockKeyError } from '../../lib/core';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { resolveEngineOptions } from '../../lib/core/options/resolve-engine-options';

const where = 'Shop.buy';

/** The error a built key throws, or undefined. */
function refusal(template: string, args: unknown[]): (Error & { code?: string }) | undefined {
  try {
    compileLockKey(template, where, args.length)(undefined, args);
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe('key templates: what a placeholder names', () => {
  it('takes an argument index, then any number of property names or array indices', () => {
    const order = { id: 7, lines: [{ sku: 'A-1', meta: { $tag: 'x', _v: 2 } }] };
    const build = compileLockKey(
      'order:{1}:{0.id}:{0.lines.0.sku}:{0.lines.0.meta.$tag}:{0.lines.0.meta._v}',
      where,
      2,
    );
    expect(build(undefined, [order, 'eu'])).toBe('order:eu:7:A-1:x:2');
  });

  it('leaves a template without placeholders as it is', () => {
    expect(compileLockKey('job:report', where, 0)(undefined, [])).toBe('job:report');
  });

  it('accepts non-empty strings and finite numbers (0 and negatives included)', () => {
    expect(compileLockKey('k:{0}:{1}:{2}', where, 3)(undefined, [0, -1.5, 'a'])).toBe('k:0:-1.5:a');
  });
});

describe('key templates: refused when the class is defined (TypeError)', () => {
  it.each([
    ['k:{}', /invalid placeholder \{\}/],
    ['k:{id}', /invalid placeholder \{id\}/],
    ['k:{-1}', /invalid placeholder \{-1\}/],
    ['k:{0.}', /invalid placeholder \{0\.\}/],
    ['k:{0[1]}', /invalid placeholder/],
    ['k:{0.a-b}', /invalid placeholder/],
    ['k:{0', /unmatched "\{" or "\}"/],
    ['k:0}', /unmatched "\{" or "\}"/],
    ['k:{{0}}', /unmatched "\{" or "\}"/],
  ])('%s', (template, message) => {
    expect(() => compileLockKey(template, where, 1)).toThrow(TypeError);
    expect(() => compileLockKey(template, where, 1)).toThrow(message);
  });

  it('an index the method does not declare', () => {
    expect(() => compileLockKey('k:{1}', where, 1)).toThrow(
      '@DistributedLock() on Shop.buy: key template "k:{1}" uses {1}, but the method declares 1 parameter',
    );
  });
});

describe('key templates: refused when the method is called (a lock-key TypeError, 400 at HTTP)', () => {
  it.each([
    [
      'k:{0}',
      [undefined],
      'Lock key template "k:{0}": {0} needs argument 0, which is missing; key parts must be strings or numbers',
    ],
    [
      'k:{0.id}',
      [null],
      'Lock key template "k:{0.id}": {0.id} cannot read "id": 0 is null; key parts must be strings or numbers',
    ],
    [
      'k:{0.id}',
      [{}],
      'Lock key template "k:{0.id}": {0.id} is undefined; key parts must be strings or numbers',
    ],
    [
      'k:{0.id}',
      [{ id: null }],
      'Lock key template "k:{0.id}": {0.id} is null; key parts must be strings or numbers',
    ],
    [
      'k:{0}',
      [''],
      'Lock key template "k:{0}": {0} is an empty string; key parts must be strings or numbers',
    ],
    ['k:{0}', [true], 'Lock key template "k:{0}": {0} is boolean true, not a string or a number'],
    ['k:{0}', [NaN], 'Lock key template "k:{0}": {0} is NaN, not a string or a number'],
    ['k:{0}', [Infinity], 'Lock key template "k:{0}": {0} is Infinity, not a string or a number'],
    ['k:{0}', [{ id: 1 }], 'Lock key template "k:{0}": {0} is an object, not a string or a number'],
    ['k:{0}', [['a']], 'Lock key template "k:{0}": {0} is an array, not a string or a number'],
    ['k:{0}', [10n], 'Lock key template "k:{0}": {0} is bigint 10, not a string or a number'],
  ])('%s with %p', (template, args, message) => {
    const error = refusal(template, args);
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toBe(message);
    expect(isLockKeyError(error)).toBe(true);
  });
});

describe('key templates: braces in values, hash tags and the prefix', () => {
  it('inserts braces from argument values as they are', () => {
    expect(compileLockKey('k:{0}', where, 1)(undefined, ['{tenant}'])).toBe('k:{tenant}');
  });

  it('makes the whole key, percent-encoded, the one hash tag of every Redis key of the lock', () => {
    const keys = new KeySpace('lock:');
    expect(keys.names('k:{tenant}')).toEqual({
      lock: 'lock:{k:%7Btenant%7D}:m',
      fence: 'lock:{k:%7Btenant%7D}:fence',
      channel: 'lock:{k:%7Btenant%7D}:m:ch',
      aux: 'lock:{k:%7Btenant%7D}:m:aux',
    });
    expect(keys.stem('100%')).toBe('lock:{100%25}');
  });

  it('refuses a keyPrefix with braces, and defaults it to "lock:"', () => {
    expect(() => resolveEngineOptions({ keyPrefix: 'app:{x}:' })).toThrow(
      'keyPrefix must not contain "{" or "}": the library places the Cluster hash tag itself',
    );
    expect(resolveEngineOptions({}).keyPrefix).toBe('lock:');
  });
});
