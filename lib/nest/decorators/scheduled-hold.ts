// @nestjs/schedule's metadata keys (strings, so this package does not depend on it).
const CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';
const INTERVAL_OPTIONS = 'SCHEDULE_INTERVAL_OPTIONS';
const TIMEOUT_OPTIONS = 'SCHEDULE_TIMEOUT_OPTIONS';

/** The longest default hold of a scheduled method: enough for any clock skew worth tolerating. */
export const MAX_DEFAULT_SCHEDULED_HOLD_MS = 60_000;
/** Default hold of a @Timeout (one-shot) method: the replicas' start-ups are rarely closer than this. */
export const DEFAULT_TIMEOUT_HOLD_MS = 10_000;

/**
 * The default `minHoldMs` of a scheduled method with `onBusy: 'skip'` (ShedLock's lockAtLeastFor):
 * half its period, at most a minute. Every replica's timer for one tick fires within that window
 * even with clocks some way apart, and the lock is free again well before the next tick. A job
 * longer than the period keeps the lock, so the next tick is skipped rather than doubled.
 * Undefined when the method is not scheduled (or the period cannot be read).
 */
export function defaultScheduledHoldMs(method: object): number | undefined {
  const interval = Reflect.getMetadata(INTERVAL_OPTIONS, method) as { timeout?: unknown } | undefined;
  if (typeof interval?.timeout === 'number') return halfPeriod(interval.timeout);
  if (Reflect.hasMetadata(TIMEOUT_OPTIONS, method)) return DEFAULT_TIMEOUT_HOLD_MS;
  const cron = Reflect.getMetadata(CRON_OPTIONS, method) as { cronTime?: unknown } | undefined;
  if (typeof cron?.cronTime === 'string') {
    const period = cronPeriodMs(cron.cronTime);
    return period === undefined ? undefined : halfPeriod(period);
  }
  return undefined;
}

function halfPeriod(periodMs: number): number {
  return Math.max(1, Math.min(Math.floor(periodMs / 2), MAX_DEFAULT_SCHEDULED_HOLD_MS));
}

const UNIT_MS = [1_000, 60_000, 3_600_000, 86_400_000, 86_400_000 * 28, 86_400_000];

/**
 * The shortest gap between two ticks of a cron expression, from its finest field that is not one
 * fixed number: `*` is one unit of that field, `*\/n` n units, a list or range one unit (the
 * shortest gap it can make). Five fields have no seconds. Undefined for what it cannot read.
 */
export function cronPeriodMs(expression: string): number | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return undefined;
  const units = fields.length === 6 ? UNIT_MS : UNIT_MS.slice(1);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (/^\d+$/.test(field)) continue;
    const step = /^(?:\*|\d+(?:-\d+)?)\/(\d+)$/.exec(field);
    if (step) return Number(step[1]) * units[i]!;
    return units[i];
  }
  return units[units.length - 1]! * 7; // every field fixed: at most yearly; treat as weekly or more
}
