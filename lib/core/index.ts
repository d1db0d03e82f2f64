// lib/core's face: its public surface (public.ts, the `nestjs-distributed-lock/core` entry) under the
// folder's own name. What the entries use beyond it is in internal.ts.
export * from './public';
