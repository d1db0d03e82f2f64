// The public API of nestjs-distributed-lock: the lock engine (also usable from plain Node) and the Nest layer.
export * from './core';
export * from './nest';
export * from './observability';
