/* Unit: the decorator's key templates and key functions, compiled once at decoration time. */
import { compileLockKey } from '../../lib/nest/lock-key-template';
import { isLockKeyError } from '../../lib/core';

const where = 'Shop.buy()';

describe('compileLockKey', () => {
  it('fills argument indices and property paths into a template', () => {
    const build = compileLockKey('order:{0}:{1.id}:{1.items.0.sku}', where, 2);
    expect(build(undefined, ['eu', { id: 7, items: [{ sku: 'A-1' }] }])).toBe('order:eu:7:A-1');
  });

  it('inserts user text as it is, braces included (the engine encodes them in the hash tag)', () => {
    expect(compileLockKey('k:{0}', where, 1)(undefined, ['{x}'])).toBe('k:{x}');
  });

  it('refuses a template that names an argument the method does not declare, at decoration time', () => {
    expect(() => compileLockKey('k:{2}', where, 2)).toThrow(TypeError);
  });

  it('refuses an empty or non-string key option at decoration time', () => {
    expect(() => compileLockKey('', where)).toThrow(/non-empty template string or a function/);
    expect(() => compileLockKey(42, where)).toThrow(TypeError);
  });

  it('rejects a missing argument or a value that is not a string or number, as a lock-key error', () => {
    const build = compileLockKey('k:{0.id}', where, 1);
    const missing = (() => {
      try {
        build(undefined, [{}]);
      } catch (err) {
        return err;
      }
    })();
    expect(isLockKeyError(missing)).toBe(true);
    expect(() => build(undefined, [{ id: { nested: true } }])).toThrow(TypeError);
  });

  it('calls a key function with the method this and arguments, and refuses an empty result', () => {
    const build = compileLockKey(function (this: { shop: string }, sku: string) {
      return `${this.shop}:${sku}`;
    }, where);
    expect(build({ shop: 'berlin' }, ['A-1'])).toBe('berlin:A-1');
    expect(() => compileLockKey(() => '', where)(undefined, [])).toThrow(/empty string/);
  });

  it('compiles an array of templates to several keys, within the multi-key limit', () => {
    expect(compileLockKey(['a:{0}', 'b:{1}'], where, 2)(undefined, ['x', 'y'])).toEqual(['a:x', 'b:y']);
    expect(() => compileLockKey([], where)).toThrow(RangeError);
    expect(() => compileLockKey(['ok', 3], where)).toThrow(/index 1/);
  });
});
