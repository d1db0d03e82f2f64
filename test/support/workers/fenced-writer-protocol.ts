/** Storage a fenced writer writes through: the SQL helper on PostgreSQL, TypeORM on it, or the Redis fenced store. */
export type FencedBackend = 'sql' | 'typeorm' | 'redis';

/** Commands the fencing specs send to a fenced-writer worker (one JSON line each). */
export type FencedWriterCommand =
  | { cmd: 'hold'; key: string; leaseMs?: number }
  /** Writes `value` with the held lock's fence; `checkSignal: false` models a holder that checked just before it paused. */
  | { cmd: 'write'; key: string; backend: FencedBackend; value: number; checkSignal?: boolean }
  /** `rounds` read-modify-writes (+1) of row/key `key`, each under its own lock, token read through currentFence(). */
  | { cmd: 'increment'; key: string; backend: FencedBackend; rounds: number }
  | { cmd: 'release'; key: string }
  | { cmd: 'close' };

/** Messages a fenced-writer worker sends back. */
export type FencedWriterMessage =
  | { type: 'ready'; pid: number }
  | { type: 'acquired'; key: string; token: number; owner: string }
  | { type: 'lost'; key: string }
  | {
      type: 'written';
      key: string;
      token: number;
      accepted: boolean;
      error?: string;
      storedFence?: string | null;
    }
  /** `tokens[i]`: the token of round i's grant; `reads[i]`: the counter value that round read. */
  | { type: 'incremented'; key: string; rounds: number; stale: number; tokens: number[]; reads: number[] }
  | { type: 'released'; key: string; result: boolean }
  | { type: 'closed' }
  | { type: 'failed'; error: string };
