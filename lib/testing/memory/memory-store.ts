/**
 * The "Redis" of the in-memory backend: strings, hashes and sorted sets with millisecond expiry, a
 * server clock, pub/sub and a switch that makes every command fail. Only the in-memory lock kinds
 * write to it, one synchronous call at a time, so each of their operations is atomic like a script.
 *
 * The clock is monotonic (performance.now() offset to the wall clock once), so leases follow the
 * same time base as the engine's timers and fencing tokens still look like server microseconds.
 */
export type MemoryValue =
  | { type: 'string'; value: string }
  | { type: 'hash'; fields: Map<string, string> }
  | { type: 'zset'; scores: Map<string, number> }
  /** Only ever app data at a lock's key (the kinds never write lists): foreign data in tests. */
  | { type: 'list'; items: string[] };

interface Entry {
  value: MemoryValue;
  /** Server ms at which the key disappears; undefined = no expiry. */
  expiresAt?: number;
}

/** What Redis answers a command on a key of another type (a script that runs into it fails there). */
export const WRONGTYPE_MESSAGE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/** One in-memory keyspace shared by the kinds of one backend. */
export class MemoryStore {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(channel: string, message: string) => void>();
  private readonly origin = Date.now() - performance.now();
  /** Set by failBackend(): every kind call rejects with it until recoverBackend(). */
  failure?: Error;

  /** The server clock in ms (fractional), monotonic. */
  nowMs(): number {
    return this.origin + performance.now();
  }

  /** The server clock in whole microseconds (the floor of fencing tokens). */
  nowUs(): number {
    return Math.floor(this.nowMs() * 1000);
  }

  /** TYPE: 'none' when absent or expired. */
  type(key: string): 'none' | MemoryValue['type'] {
    return this.entry(key)?.value.type ?? 'none';
  }

  exists(key: string): boolean {
    return this.entry(key) !== undefined;
  }

  /** PTTL: ms left (at least 1 while the key lives), -1 without expiry, -2 when absent. */
  pttl(key: string): number {
    const e = this.entry(key);
    if (!e) return -2;
    if (e.expiresAt === undefined) return -1;
    return Math.max(1, Math.round(e.expiresAt - this.nowMs()));
  }

  /** PEXPIRE: a lease of 0 ms or less deletes the key, as in Redis. */
  pexpire(key: string, ms: number): void {
    const e = this.entry(key);
    if (!e) return;
    if (ms <= 0) this.entries.delete(key);
    else e.expiresAt = this.nowMs() + ms;
  }

  del(...keys: string[]): number {
    let n = 0;
    for (const key of keys) if (this.entry(key) && this.entries.delete(key)) n++;
    return n;
  }

  /** GET of a string key (undefined when absent or of another type). */
  getString(key: string): string | undefined {
    const v = this.entry(key)?.value;
    return v?.type === 'string' ? v.value : undefined;
  }

  /** SET key value [PX ms]: without `pxMs` the key never expires (app data, in tests). */
  setString(key: string, value: string, pxMs?: number): void {
    const expiresAt = pxMs === undefined ? undefined : this.nowMs() + pxMs;
    this.entries.set(key, { value: { type: 'string', value }, expiresAt });
  }

  /** RPUSH (a new list never expires): lets tests put foreign data at a lock's key. */
  rpush(key: string, ...items: string[]): void {
    const v = this.entry(key)?.value;
    if (v?.type === 'list') v.items.push(...items);
    else this.entries.set(key, { value: { type: 'list', items: [...items] } });
  }

  /** The items of a list key, or undefined when absent or of another type (read-only use). */
  list(key: string): readonly string[] | undefined {
    const v = this.entry(key)?.value;
    return v?.type === 'list' ? v.items : undefined;
  }

  /** The fields of a hash key, or undefined when absent or of another type (read-only use). */
  hash(key: string): Map<string, string> | undefined {
    const v = this.entry(key)?.value;
    return v?.type === 'hash' ? v.fields : undefined;
  }

  /** HSET: creates the hash (without expiry) when absent; WRONGTYPE on another type. */
  hset(key: string, fields: Record<string, string>): void {
    this.assertType(key, 'hash');
    let map = this.hash(key);
    if (!map) {
      map = new Map();
      this.entries.set(key, { value: { type: 'hash', fields: map } });
    }
    for (const [f, v] of Object.entries(fields)) map.set(f, v);
  }

  /** HDEL: an emptied hash disappears, as in Redis. Returns the fields removed. */
  hdel(key: string, ...fields: string[]): number {
    this.assertType(key, 'hash');
    const map = this.hash(key);
    if (!map) return 0;
    let n = 0;
    for (const f of fields) if (map.delete(f)) n++;
    if (map.size === 0) this.entries.delete(key);
    return n;
  }

  /** The scores of a sorted set, or undefined when absent or of another type (read-only use). */
  zset(key: string): Map<string, number> | undefined {
    const v = this.entry(key)?.value;
    return v?.type === 'zset' ? v.scores : undefined;
  }

  /** ZADD: creates the set (without expiry) when absent; WRONGTYPE on another type. */
  zadd(key: string, score: number, member: string): void {
    this.assertType(key, 'zset');
    let map = this.zset(key);
    if (!map) {
      map = new Map();
      this.entries.set(key, { value: { type: 'zset', scores: map } });
    }
    map.set(member, score);
  }

  /** ZREM: an emptied set disappears. Returns the members removed. */
  zrem(key: string, ...members: string[]): number {
    this.assertType(key, 'zset');
    const map = this.zset(key);
    if (!map) return 0;
    let n = 0;
    for (const m of members) if (map.delete(m)) n++;
    if (map.size === 0) this.entries.delete(key);
    return n;
  }

  /** Members in Redis order: by score, then by member. WRONGTYPE on another type. */
  zrange(key: string): [member: string, score: number][] {
    this.assertType(key, 'zset');
    const map = this.zset(key);
    if (!map) return [];
    return [...map].sort(([ma, sa], [mb, sb]) => sa - sb || (ma < mb ? -1 : ma > mb ? 1 : 0));
  }

  /** PUBLISH to the in-process subscribers (the wake-up hub's subscriber shims). */
  publish(channel: string, message = 'released'): void {
    for (const listener of [...this.listeners]) listener(channel, message);
  }

  /** Adds a pub/sub listener; returns its removal. */
  onPublish(listener: (channel: string, message: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every live key (for the fault controls and tests). */
  keys(): string[] {
    return [...this.entries.keys()].filter((k) => this.entry(k) !== undefined);
  }

  /** Throws Redis' WRONGTYPE error when `key` holds another type (absent is fine). */
  private assertType(key: string, type: MemoryValue['type']): void {
    const actual = this.type(key);
    if (actual !== 'none' && actual !== type) throw new Error(WRONGTYPE_MESSAGE);
  }

  private entry(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e?.expiresAt !== undefined && e.expiresAt <= this.nowMs()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
}
