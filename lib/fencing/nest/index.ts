// `nestjs-distributed-lock/fencing/nest`: the receiving side of the X-Fencing-Token convention for Nest
// apps. Apart from the plain `nestjs-distributed-lock/fencing` entry, so that one loads without Nest.
/**
 * The receiving side of the `X-Fencing-Token` convention for Nest apps (docs/FENCING.md).
 * @module nestjs-distributed-lock/fencing/nest
 */
export { FencingTokenGuard, FencedResource, ADMITTED_FENCE } from './fencing-token.guard';
export type { FencedResourceOptions, FencedResourceResolver } from './fencing-token.guard';
export { FenceLedger, MemoryFenceLedger } from '../http/fence-ledger';
