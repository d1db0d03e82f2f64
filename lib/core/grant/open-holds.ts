/**
 * The hold ids of one grant that are not released yet. Almost every grant has one hold all its life
 * (re-entries add more): that one is a field, and a Set exists only from the second hold on. A Set
 * per grant, filled and emptied once, cost an allocation on every grant and another when V8 shrank
 * its table on the last delete.
 */
export class OpenHolds implements Iterable<string> {
  /** The only hold, while there has never been a second one at a time. */
  private one?: string;
  /** Every open hold, once two were open at the same time. */
  private many?: Set<string>;

  get size(): number {
    if (this.many) return this.many.size;
    return this.one === undefined ? 0 : 1;
  }

  add(holdId: string): void {
    if (this.many) this.many.add(holdId);
    else if (this.one === undefined || this.one === holdId) this.one = holdId;
    else {
      this.many = new Set([this.one, holdId]);
      this.one = undefined;
    }
  }

  /** Removes `holdId`; false when it was not open. */
  delete(holdId: string): boolean {
    if (this.many) return this.many.delete(holdId);
    if (this.one === undefined || this.one !== holdId) return false;
    this.one = undefined;
    return true;
  }

  *[Symbol.iterator](): Iterator<string> {
    if (this.many) yield* this.many;
    else if (this.one !== undefined) yield this.one;
  }
}
