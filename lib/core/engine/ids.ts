// Kept for the modules not yet moved to the ids' and the clock's homes (lock-context.ts, deadlines.ts).
export { randomId } from './lock-context';
export { monotonicMs } from './deadlines';
