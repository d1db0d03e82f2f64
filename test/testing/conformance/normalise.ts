/*
 * The common shape both backends' observations are compared in. Values that legitimately differ
 * between two runs of the same step are normalised: fencing tokens (the counter is seeded at
 * FENCE_BASE, so tokens are FENCE_BASE + n on both sides; a token floored by the server clock is
 * 'clock-µs'), server-clock scores ('clock-µs'), deadlines in server ms (ms left, approximate) and
 * durations such as PTTLs and retryAfterMs (approximate). Small integers (codes, counts, queue
 * tickets, hold markers) are compared exactly.
 */

/** The fence counter of every scenario starts here: above the server clock in µs, below 2^53. */
export const FENCE_BASE = 5_000_000_000_000_000;
/** Two approximate durations agree when they differ by at most this (they are read a few ms apart). */
export const TOLERANCE_MS = 1500;
/** Integers up to this (in absolute value) are codes, counts or tickets: compared exactly. */
const EXACT_UP_TO = 16;

/** A duration that may differ a little between the two backends. */
export class Approx {
  constructor(readonly ms: number) {}
}

/** One normalised value: plain JSON, with Approx where a duration is. */
export type Normalised =
  string | number | boolean | null | Approx | Normalised[] | { [k: string]: Normalised };

/** Normalises one number read from a reply or from the state; `nowMs` is that side's server clock. */
export function normaliseNumber(n: number, nowMs: number): Normalised {
  if (!Number.isFinite(n) || Math.abs(n) <= EXACT_UP_TO) return n;
  if (Math.abs(n - FENCE_BASE) < 1e9) return `fence+${n - FENCE_BASE}`;
  if (n > 1e15) return 'clock-µs';
  if (n > 1e12) return new Approx(n - nowMs); // a deadline in server ms: compare the ms left
  return new Approx(n);
}

/**
 * Normalises a stored string: integers go through normaliseNumber; in a mutex of one hold,
 * '<owner> <hold id> <token>[ w]', the token does; other text stays.
 */
export function normaliseText(s: string, nowMs: number): Normalised {
  if (/^-?\d+$/.test(s)) return normaliseNumber(Number(s), nowMs);
  const single = /^(\S+ \S+ )(\d+)((?: w)?)$/.exec(s);
  return single ? `${single[1]}${String(normaliseNumber(Number(single[2]), nowMs))}${single[3]}` : s;
}

/** Normalises any reply (arrays, objects, numbers, strings). */
export function normaliseReply(value: unknown, nowMs: number): Normalised {
  if (typeof value === 'number') return normaliseNumber(value, nowMs);
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map((v) => normaliseReply(v, nowMs));
  if (value instanceof Error) return normaliseError(value);
  const out: { [k: string]: Normalised } = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = normaliseReply(v, nowMs);
  return out;
}

/**
 * An error in a comparable form: a Redis error (raw, or as the cause of a LockRedisError) by its
 * code (WRONGTYPE, ERR...), since Redis adds the script's SHA and line to the text; the library's
 * own errors (LockWrongTypeError, LockUpgradeError) by class and exact message.
 */
function normaliseError(err: Error): Normalised {
  const code = (e: unknown): string | undefined =>
    e instanceof Error ? /^([A-Z]+) /.exec(e.message)?.[1] : undefined;
  if (err.name === 'LockRedisError') return { error: err.name, redisError: code(err.cause) ?? err.message };
  const own = code(err);
  return own === undefined ? { error: err.name, message: err.message } : { redisError: own };
}

/**
 * Makes two observations comparable with toEqual: where both hold an Approx within TOLERANCE_MS
 * both become the same '≈' text; any other Approx becomes '<ms> ms', so a diff shows the numbers.
 */
export function reconcile(a: Normalised, b: Normalised): [Normalised, Normalised] {
  if (a instanceof Approx && b instanceof Approx) {
    if (Math.abs(a.ms - b.ms) <= TOLERANCE_MS) return ['≈', '≈'];
    return [`${a.ms} ms`, `${b.ms} ms`];
  }
  if (a instanceof Approx || b instanceof Approx) return [plain(a), plain(b)];
  if (Array.isArray(a) && Array.isArray(b)) {
    const pairs = a.map((v, i) => (i < b.length ? reconcile(v, b[i]!) : [plain(v), undefined]));
    return [pairs.map((p) => p[0]!), b.map((v, i) => (i < a.length ? pairs[i]![1]! : plain(v)))];
  }
  if (isRecord(a) && isRecord(b)) {
    const ra: { [k: string]: Normalised } = {};
    const rb: { [k: string]: Normalised } = {};
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (k in a && k in b) [ra[k], rb[k]] = reconcile(a[k]!, b[k]!);
      else if (k in a) ra[k] = plain(a[k]!);
      else rb[k] = plain(b[k]!);
    }
    return [ra, rb];
  }
  return [plain(a), plain(b)];
}

function plain(v: Normalised): Normalised {
  if (v instanceof Approx) return `${v.ms} ms`;
  if (Array.isArray(v)) return v.map(plain);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function isRecord(v: Normalised): v is { [k: string]: Normalised } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Approx);
}
