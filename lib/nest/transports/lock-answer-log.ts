import { Logger } from '@nestjs/common';
import { LockError } from '../../core';
import { escapeForLog, escapeKey } from '../log-escape';
import type { LockErrorCode } from './lock-error-answer';

/** One warn line per answer at most this often: contention or an outage must not flood the log. */
export const ANSWER_LOG_EVERY_MS = 10_000;

/**
 * What the module logs for each answer it gives, on HTTP and on the other transports alike (the one
 * rule docs/TRANSPORTS.md "Logs" states): busy (423 / LOCKED) and unavailable (503 /
 * SERVICE_UNAVAILABLE) are expected under contention or during an outage, so they are one warn line
 * per answer every 10 s, with how many were answered in between; a refused key is the client's
 * mistake, told to the client and not logged; an unexpected lock failure is an error with its stack
 * (on HTTP it passes through and Nest's exception handler logs it, so HTTP never calls this for it).
 * Keys and messages are escaped (control characters, CR/LF) and keys cut to 120 characters, so user
 * data in a key cannot forge log lines.
 */
export class LockAnswerLog {
  private readonly last = new Map<string, { at: number; since: number }>();

  constructor(private readonly logger = new Logger('DistributedLock')) {}

  /**
   * Logs one answer `code` given over `transport` for `error`; `shown` is how the line names the
   * answer (HTTP names its status, `Answering 423 over http: …`).
   */
  answered(transport: string, code: LockErrorCode, error: unknown, shown: string = code): void {
    if (code === 'BAD_USER_INPUT') return;
    const what = error instanceof LockError ? describeLockError(error) : String(error);
    if (code === 'INTERNAL_SERVER_ERROR') {
      this.logger.error(
        `Answering ${shown} over ${transport}: ${what}`,
        escapeForLog((error as Error).stack ?? ''),
      );
      return;
    }
    const now = performance.now();
    const entry = this.last.get(shown);
    if (entry && now - entry.at < ANSWER_LOG_EVERY_MS) {
      entry.since += 1;
      return;
    }
    const more = entry && entry.since > 0 ? ` (and ${entry.since} more since the last line)` : '';
    this.last.set(shown, { at: now, since: 0 });
    this.logger.warn(`Answering ${shown} over ${transport}: ${what}${more}`);
  }
}

/** `Name (key "…"): message`, with the key escaped and the message's copy of the key replaced. */
function describeLockError(error: LockError): string {
  const key = error.key === undefined ? undefined : escapeKey(error.key);
  const message = error.key ? error.message.split(error.key).join('…') : error.message;
  return `${error.name}${key ? ` (key ${key})` : ''}: ${escapeForLog(message)}`;
}
