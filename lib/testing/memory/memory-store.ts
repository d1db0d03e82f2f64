import { nodeRuntime, type Runtime } from '../../core/runtime/runtime';
/**
 * The "Redis" of the in-memory backend: strings, hashes and sorted sets with millisecond expiry, a
 * server clock, pub/sub and a switch that makes every command fail. Its commands are named after
 * Redis' and answer as Redis does (nil as null, WRONGTYPE on a key of another type), so the script
 * ports (./scripts) read like their Lua. Only the ports write to it, one synchronous script at a time,
 * so each script is atomic as in Redis; during a script the clock stands still (Redis 7 freezes the
 * time keys expire by for the length of a script).
 *
 * The clock is monotonic (the runtime's now() offset to its wall clock once), so leases follow the
 * same time base as the engine's timers and fencing tokens still look like server microseconds.
 */
export type MemoryValue =
  | { type: 'string'; value: string }
  | { type: 'hash'; fields: Map<string, string> }
  | { type: 'zset'; scores: Map<string, number> }
  /** Only ever app data at a lock's key (the scripts never write lists): foreign data in tests. */
  | { type: 'list'; items: string[] };

interface Entry {
  value: MemoryValue;
  /** Server ms at which the key disappears; undefined = no expiry. */
  expiresAt?: number;
}

/** What Redis answers a command on a key of another type (a script that runs into it fails there). */
export const WRONGTYPE_MESSAGE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/** One in-memory keyspace, shared by the engines of one "Redis" (see `replicaOf`). */
export class MemoryStore {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(channel: string, message: string) => void>();
  /** Wall-clock offset of the runtime's monotonic clock, taken once. */
  private readonly origin: number;
  /** The clock while a script runs (see atomically). */
  private frozenMs?: number;
  /** Set by failBackend(): every script and PING rejects with it until recoverBackend(). */
  failure?: Error;

  constructor(
    /** The server's clock: the engine's runtime, or a simulated server's own (test/sim/). */
    private readonly clock: Pick<Runtime, 'now' | 'wallNow'> = nodeRuntime,
  ) {
    this.origin = clock.wallNow() - clock.now();
  }

  /** Runs `script` with the clock stopped, as Redis runs one script. */
  atomically<T>(script: () => T): T {
    this.frozenMs = this.nowMs();
    try {
      return script();
    } finally {
      this.frozenMs = undefined;
    }
  }

  /** The server clock in ms (fractional), monotonic. */
  nowMs(): number {
    return this.frozenMs ?? this.origin + this.clock.now();
  }

  /** TIME, in whole microseconds (the floor of fencing tokens). */
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
  pexpire(key: string, ms: number | string): void {
    const e = this.entry(key);
    if (!e) return;
    if (Number(ms) <= 0) this.entries.delete(key);
    else e.expiresAt = this.nowMs() + Number(ms);
  }

  del(...keys: string[]): number {
    let n = 0;
    for (const key of keys) if (this.entry(key) && this.entries.delete(key)) n++;
    return n;
  }

  /** GET: null when absent; WRONGTYPE on another type. */
  get(key: string): string | null {
    return this.read(key, 'string')?.value ?? null;
  }

  /**
   * SET key value [NX] [PX ms]: replaces a key of any type (and its TTL); without `pxMs` the key never
   * expires. With `nx`, false (nothing written) when the key exists.
   */
  set(key: string, value: string, pxMs?: number | string, nx = false): boolean {
    if (nx && this.exists(key)) return false;
    const expiresAt = pxMs === undefined ? undefined : this.nowMs() + Number(pxMs);
    this.entries.set(key, { value: { type: 'string', value }, expiresAt });
    return true;
  }

  /** RPUSH (a new list never expires): lets tests put foreign data at a lock's key. */
  rpush(key: string, ...items: string[]): void {
    const list = this.read(key, 'list');
    if (list) list.items.push(...items);
    else this.entries.set(key, { value: { type: 'list', items: [...items] } });
  }

  /** LRANGE key 0 -1. */
  lrange(key: string): string[] {
    return [...(this.read(key, 'list')?.items ?? [])];
  }

  /** HGET: null when the key or field is absent; WRONGTYPE on another type. */
  hget(key: string, field: string): string | null {
    return this.read(key, 'hash')?.fields.get(field) ?? null;
  }

  /** HGETALL, in insertion order. */
  hgetall(key: string): [field: string, value: string][] {
    return [...(this.read(key, 'hash')?.fields ?? [])];
  }

  hexists(key: string, field: string): boolean {
    return this.read(key, 'hash')?.fields.has(field) ?? false;
  }

  hlen(key: string): number {
    return this.read(key, 'hash')?.fields.size ?? 0;
  }

  /** HSET key field value [field value ...]: creates the hash (without expiry) when absent. */
  hset(key: string, ...fieldsAndValues: string[]): void {
    let hash = this.read(key, 'hash');
    if (!hash) {
      hash = { type: 'hash', fields: new Map() };
      this.entries.set(key, { value: hash });
    }
    for (let i = 0; i + 1 < fieldsAndValues.length; i += 2)
      hash.fields.set(fieldsAndValues[i]!, fieldsAndValues[i + 1]!);
  }

  /** HINCRBY: the new value (the field counts from 0). */
  hincrby(key: string, field: string, by: number): number {
    const value = Number(this.hget(key, field) ?? '0') + by;
    this.hset(key, field, String(value));
    return value;
  }

  /** HDEL: an emptied hash disappears, as in Redis. Returns the fields removed. */
  hdel(key: string, ...fields: string[]): number {
    const hash = this.read(key, 'hash');
    if (!hash) return 0;
    let n = 0;
    for (const f of fields) if (hash.fields.delete(f)) n++;
    if (hash.fields.size === 0) this.entries.delete(key);
    return n;
  }

  /** ZADD [NX]: creates the set (without expiry) when absent. */
  zadd(key: string, score: number, member: string, nx = false): void {
    let zset = this.read(key, 'zset');
    if (!zset) {
      zset = { type: 'zset', scores: new Map() };
      this.entries.set(key, { value: zset });
    }
    if (!nx || !zset.scores.has(member)) zset.scores.set(member, score);
  }

  /** ZSCORE: null when absent. */
  zscore(key: string, member: string): number | null {
    return this.read(key, 'zset')?.scores.get(member) ?? null;
  }

  zcard(key: string): number {
    return this.read(key, 'zset')?.scores.size ?? 0;
  }

  /** ZREM: an emptied set disappears. Returns the members removed. */
  zrem(key: string, ...members: string[]): number {
    const zset = this.read(key, 'zset');
    if (!zset) return 0;
    let n = 0;
    for (const m of members) if (zset.scores.delete(m)) n++;
    if (zset.scores.size === 0) this.entries.delete(key);
    return n;
  }

  /** ZRANGE key start stop WITHSCORES (negative indexes count from the end): by score, then member. */
  zrange(key: string, start = 0, stop = -1): [member: string, score: number][] {
    const zset = this.read(key, 'zset');
    if (!zset) return [];
    const sorted = [...zset.scores].sort(([ma, sa], [mb, sb]) => sa - sb || (ma < mb ? -1 : ma > mb ? 1 : 0));
    const from = start < 0 ? Math.max(0, sorted.length + start) : start;
    const to = stop < 0 ? sorted.length + stop : stop;
    return sorted.slice(from, to + 1);
  }

  /** ZRANGEBYSCORE key -inf max: the members scored at most `max`, in order. */
  zrangebyscore(key: string, max: number): string[] {
    return this.zrange(key)
      .filter(([, score]) => score <= max)
      .map(([member]) => member);
  }

  /** ZREMRANGEBYSCORE key -inf max. */
  zremrangebyscore(key: string, max: number): number {
    return this.zrem(key, ...this.zrangebyscore(key, max));
  }

  /** PUBLISH (or SPUBLISH) to the in-process subscribers (the wake-up hub's subscriber shims). */
  publish(channel: string, message: string): void {
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

  /** The value at `key` when it has `type`; undefined when absent; WRONGTYPE on another type. */
  private read<T extends MemoryValue['type']>(
    key: string,
    type: T,
  ): Extract<MemoryValue, { type: T }> | undefined {
    const value = this.entry(key)?.value;
    if (value === undefined) return undefined;
    if (value.type !== type) throw new Error(WRONGTYPE_MESSAGE);
    return value as Extract<MemoryValue, { type: T }>;
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
