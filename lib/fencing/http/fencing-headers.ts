import { toFence, type Fence, type FenceSource } from '../fence';

/** The request header that carries the writer's fencing token (decimal digits). */
export const FENCING_TOKEN_HEADER = 'x-fencing-token';
/** The request header that carries the writer's owner id (the grant's, from fenceOf). */
export const FENCING_OWNER_HEADER = 'x-fencing-owner';

/** The headers a caller adds to a request it makes while holding the lock. */
export function fencingHeaders(source: FenceSource): Record<string, string> {
  const fence = toFence(source);
  return { [FENCING_TOKEN_HEADER]: String(fence.token), [FENCING_OWNER_HEADER]: fence.owner };
}

/** Header values as Node and the frameworks give them. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

/**
 * The fence a request carries: `resource` names it in messages. Returns undefined when the token
 * header is missing; throws TypeError or RangeError when a header is malformed or the owner header
 * is missing (answer 400).
 */
export function readFencingHeaders(headers: IncomingHeaders, resource: string): Fence | undefined {
  const raw = headers[FENCING_TOKEN_HEADER];
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  if (!/^[1-9][0-9]{0,18}$/.test(text)) {
    throw new TypeError(
      `${FENCING_TOKEN_HEADER} must be a positive integer, got ${JSON.stringify(text.slice(0, 40))}`,
    );
  }
  const big = BigInt(text);
  const token = big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  const ownerRaw = headers[FENCING_OWNER_HEADER];
  const owner = Array.isArray(ownerRaw) ? ownerRaw.join(',') : ownerRaw;
  if (!owner) throw new TypeError(`${FENCING_OWNER_HEADER} must accompany ${FENCING_TOKEN_HEADER}`);
  return toFence({ key: resource, token, owner });
}
