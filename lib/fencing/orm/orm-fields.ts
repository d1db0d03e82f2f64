/** Property names of the fence columns on an ORM model or entity; defaults `lockFence` and `lockOwner`. */
export interface FenceFields {
  fence?: string;
  owner?: string;
}

/** The field names with their defaults. */
export function fenceFields(fields: FenceFields | undefined): Required<FenceFields> {
  return { fence: fields?.fence ?? 'lockFence', owner: fields?.owner ?? 'lockOwner' };
}

/** Checks an ORM where/data object before any I/O. */
export function assertRecord(value: unknown, what: string): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${what} must be an object`);
  }
}
