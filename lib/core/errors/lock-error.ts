/** Base class of every error this library raises on purpose; `name` is the concrete class name. */
export class LockError extends Error {
  /** The user key the error is about, when there is one. */
  readonly key?: string;

  constructor(message: string, key?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.key = key;
  }
}
