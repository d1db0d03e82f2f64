/**
 * Names of the inspection data of one key prefix. They share the hash tag `{~inspect}`, so on a
 * Cluster they live in one slot (one node), read and written by one script call each. A user key
 * `~inspect` cannot collide: its lock keys end in `:m`, `:rw`, `:fair`, `:sem` or `:fence`.
 */
export class InspectionKeys {
  private readonly stem: string;

  constructor(readonly prefix: string) {
    this.stem = `${prefix}{~inspect}`;
  }

  /** Zset: engine id → when its record expires (server ms). */
  get engines(): string {
    return `${this.stem}:engines`;
  }

  /** Hash: one engine's record (`@` = who it is, `g:…` = its grants, `w:…` = its local waiters). */
  engine(engineId: string): string {
    return `${this.stem}:engine:${engineId}`;
  }

  /** Prefix of the engine records (the registry-read script appends the engine id). */
  get enginePrefix(): string {
    return `${this.stem}:engine:`;
  }

  /** Capped stream of force releases (the audit log). */
  get audit(): string {
    return `${this.stem}:audit`;
  }

  /** Channel on which one engine hears that a lock of its was force-released. */
  notice(engineId: string): string {
    return `${this.stem}:notice:${engineId}`;
  }
}
