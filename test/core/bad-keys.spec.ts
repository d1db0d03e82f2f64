/*
 * Bad and odd keys (the first rows of the bad-input table in RELIABILITY.md): refused with a
 * TypeError/RangeError before any I/O (INFO commandstats shows no command reached Redis), odd but
 * valid keys round-trip byte-exactly, and user text cannot break the Cluster hash tag.
 */
import calculateSlot from 'cluster-key-slot';
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { commandsDuring, uniqueKey, useLockEnv } from '../support/lock-env';
import { engineOnConnectedClient, expectRefused } from '../support/refusal';

const PREFIX = 'badkey:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;

beforeEach(async () => {
  engine = await engineOnConnectedClient(env, PREFIX);
});

describe('the "nothing sent" probe', () => {
  it('sees the commands of a valid call (so an empty delta below means something)', async () => {
    const sent = await commandsDuring(env.server.port, async () => {
      const handle = await engine.acquire(uniqueKey('probe'), { waitMs: 0 });
      await handle.release();
    });
    expect((sent.evalsha ?? 0) + (sent.eval ?? 0)).toBeGreaterThanOrEqual(2);
  });
});

describe('keys that are refused before any I/O', () => {
  it.each([
    ['an empty string', '', RangeError, /must not be empty/],
    ['undefined', undefined, TypeError, /lock key must be a string.*undefined/],
    ['null', null, TypeError, /lock key must be a string.*null/],
    ['an object', { id: 1 }, TypeError, /lock key must be a string.*object/],
    // A flat array of keys is a multi-key lock (test/multi); an array inside it is refused.
    ['an array inside an array', [['a']], TypeError, /lock key at index 0 must be a string.*array/],
    ['a number', 42, TypeError, /lock key must be a string.*number 42/],
    ['513 ASCII bytes', 'k'.repeat(513), RangeError, /513 bytes long; at most 512/],
    [
      '171 euro signs (513 UTF-8 bytes, 171 characters)',
      '€'.repeat(171),
      RangeError,
      /513 bytes long; at most 512/,
    ],
    ['a huge key', 'x'.repeat(1_000_000), RangeError, /1000000 bytes long/],
  ])('refuses %s as key with a clear error and sends nothing', async (_label, key, type, message) => {
    await expectRefused(env, engine, key, {}, type, message);
  });

  it('refuses a bad key in current() synchronously, and accepts the longest allowed key', async () => {
    expect(() => engine.current('')).toThrow(RangeError);
    expect(() => engine.current('k'.repeat(513))).toThrow(RangeError);
    expect(() => engine.current({} as unknown as string)).toThrow(TypeError);
    const longest = '€'.repeat(170) + 'ab'; // 512 bytes
    const handle = await engine.acquire(longest, { waitMs: 0 });
    expect(handle.key).toBe(longest);
    expect(await handle.release()).toBe(true);
  });
});

describe('keys that round-trip byte-exactly', () => {
  const odd = [
    'café ünïcödé',
    '🔒 lock 🚀 with emoji 👩‍👩‍👧',
    '  leading, inner  and trailing spaces  ',
    '中文键 / 한국어 키 / עברית',
    'tab\tnewline\ncarriage\r',
    'nul\u0000byte',
    '*?[glob]^chars',
  ];
  it.each(odd.map((k) => [JSON.stringify(k), k]))(
    'round-trips %s: handle.key, Redis key bytes, release',
    async (_label, key) => {
      const handle = await engine.acquire(key, { waitMs: 0 });
      expect(handle.key).toBe(key);
      const lock = keys.names(key).lock;
      const raw = await env.admin.keysBuffer(`${PREFIX}*`);
      const ours = raw.filter((name) => name.equals(Buffer.from(lock, 'utf8')));
      expect(ours).toHaveLength(1);
      expect(ours[0]!.includes(Buffer.from(key, 'utf8'))).toBe(true);
      expect(engine.current()).toBeUndefined();
      await engine.runInLock(handle, async () => expect(engine.current(key)).toBe(handle));
      expect(await handle.release()).toBe(true);
      expect(await env.admin.exists(lock)).toBe(0);
    },
  );

  it('keeps keys that differ only in Unicode normalization apart (no silent folding)', async () => {
    const composed = `caf\u00e9:${uniqueKey('nfc')}`;
    const decomposed = composed.replace('\u00e9', 'e\u0301');
    const a = await engine.acquire(composed, { waitMs: 0 });
    const b = await engine.acquire(decomposed, { waitMs: 0 }); // a different lock: not busy
    expect(a.key).not.toBe(b.key);
    expect(await a.release()).toBe(true);
    expect(await b.release()).toBe(true);
  });
});

describe('braces in user keys (Redis Cluster hash tags)', () => {
  const braced = ['a{b}c', '{x}', '}{', '{}', '{', '}', 'user:{42}:cart', '%7B', 'a%b', '{{nested}}'];

  it.each(braced.map((k) => [k]))('keeps lock, fence, channel and aux of %j in one slot', (key) => {
    for (const kind of ['m', 'rw', 'fair', 'sem'] as const) {
      const names = keys.names(key, kind);
      const slots = new Set([names.lock, names.fence, names.channel, names.aux].map((n) => calculateSlot(n)));
      expect(slots.size).toBe(1);
      // The whole user key is the hash tag: exactly one "{" and one "}" in each name, around it.
      for (const n of [names.lock, names.fence, names.channel, names.aux]) {
        expect(n.split('{')).toHaveLength(2);
        expect(n.split('}')).toHaveLength(2);
      }
    }
  });

  it('maps different user keys to different lock names even when they look alike once encoded', () => {
    const names = braced.map((k) => keys.names(k).lock);
    expect(new Set(names).size).toBe(braced.length);
    expect(keys.names('{').lock).not.toBe(keys.names('%7B').lock);
  });

  it('locks and releases braced keys for real, each its own lock', async () => {
    const handles = [];
    for (const key of braced) handles.push(await engine.acquire(key, { waitMs: 0 }));
    expect(handles.map((h) => h.key)).toEqual(braced);
    for (const h of handles) expect(await h.release()).toBe(true);
  });
});
