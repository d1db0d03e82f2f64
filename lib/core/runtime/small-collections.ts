/*
 * A Set and a Map for the engine's bookkeeping that is empty or holds one entry nearly all the time
 * (the held grants, their count per lock, the watchdog's grants, the local wait queues): every
 * uncontended acquire + release takes each of them from none to one entry and back. On a native Set
 * or Map that round trip costs an allocation: V8 shrinks a hash table whose last entry is deleted,
 * building a new one (about 100 bytes each, four tables per operation). Here the one entry is a
 * field, and a native Set or Map exists only while two or more entries are in at once; it is dropped
 * once empty. Iteration visits the entries in insertion order; an entry added while an iteration
 * over a single entry is under way is not visited by it (the engine never adds while iterating).
 */

/** A Set that holds its only element in a field. */
export class SmallSet<T> implements Iterable<T> {
  private one: T | undefined;
  private hasOne = false;
  /** Every element, while two or more were in at the same time; dropped when empty. */
  private many?: Set<T>;

  get size(): number {
    if (this.many) return this.many.size;
    return this.hasOne ? 1 : 0;
  }

  has(value: T): boolean {
    if (this.many) return this.many.has(value);
    return this.hasOne && this.one === value;
  }

  add(value: T): this {
    if (this.many) this.many.add(value);
    else if (!this.hasOne) {
      this.one = value;
      this.hasOne = true;
    } else if (this.one !== value) {
      this.many = new Set([this.one as T, value]);
      this.one = undefined;
      this.hasOne = false;
    }
    return this;
  }

  /** Removes `value`; false when it was not in. */
  delete(value: T): boolean {
    const many = this.many;
    if (many) {
      const removed = many.delete(value);
      if (many.size === 0) this.many = undefined;
      return removed;
    }
    if (!this.hasOne || this.one !== value) return false;
    this.one = undefined;
    this.hasOne = false;
    return true;
  }

  clear(): void {
    this.many = undefined;
    this.one = undefined;
    this.hasOne = false;
  }

  *[Symbol.iterator](): Iterator<T> {
    if (this.many) yield* this.many;
    else if (this.hasOne) yield this.one as T;
  }
}

/** A Map that holds its only entry in two fields. */
export class SmallMap<K, V> implements Iterable<[K, V]> {
  private oneKey: K | undefined;
  private oneValue: V | undefined;
  private hasOne = false;
  /** Every entry, while two or more were in at the same time; dropped when empty. */
  private many?: Map<K, V>;

  get size(): number {
    if (this.many) return this.many.size;
    return this.hasOne ? 1 : 0;
  }

  has(key: K): boolean {
    if (this.many) return this.many.has(key);
    return this.hasOne && this.oneKey === key;
  }

  get(key: K): V | undefined {
    if (this.many) return this.many.get(key);
    return this.hasOne && this.oneKey === key ? this.oneValue : undefined;
  }

  set(key: K, value: V): this {
    if (this.many) this.many.set(key, value);
    else if (!this.hasOne || this.oneKey === key) {
      this.oneKey = key;
      this.oneValue = value;
      this.hasOne = true;
    } else {
      this.many = new Map<K, V>([
        [this.oneKey as K, this.oneValue as V],
        [key, value],
      ]);
      this.oneKey = undefined;
      this.oneValue = undefined;
      this.hasOne = false;
    }
    return this;
  }

  /** Removes `key`; false when it was not in. */
  delete(key: K): boolean {
    const many = this.many;
    if (many) {
      const removed = many.delete(key);
      if (many.size === 0) this.many = undefined;
      return removed;
    }
    if (!this.hasOne || this.oneKey !== key) return false;
    this.oneKey = undefined;
    this.oneValue = undefined;
    this.hasOne = false;
    return true;
  }

  clear(): void {
    this.many = undefined;
    this.oneKey = undefined;
    this.oneValue = undefined;
    this.hasOne = false;
  }

  *[Symbol.iterator](): Iterator<[K, V]> {
    if (this.many) yield* this.many;
    else if (this.hasOne) yield [this.oneKey as K, this.oneValue as V];
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this) yield value;
  }
}
