import { Logger } from '@nestjs/common';
import { LockError } from '../../core';
import { escapeForLog, escapeKey } from '../log-escape';
import type { LockErrorAnswer } from './lock-error-answer';

/** One warn line per code at most this often: contention or an outage must not flood the log. */
export const ANSWER_LOG_EVERY_MS = 10_000;

/**
 * Writes what the transport answers to Nest's Logger: busy and unavailable as one warn line per
 * code every 10 s (with how many were answered in between), an unexpected lock failure as an
 * error with its stack. Keys and messages are escaped (control characters, CR/LF) and keys cut to
 * 120 characters, so user data in a key cannot forge log lines.
 */
export class LockAnswerLog {
  private readonly last = new Map<string, { at: number; since: number }>();

  constructor(private readonly logger = new Logger('DistributedLock')) {}

  /** Logs one answer given over `transport` for `error`. */
  answered(transport: string, answer: LockErrorAnswer, error: unknown): void {
    if (answer.code === 'BAD_USER_INPUT') return; // the client's mistake, told to the client
    const what = error instanceof LockError ? describeLockError(error) : String(error);
    if (answer.code === 'INTERNAL_SERVER_ERROR') {
      this.logger.error(
        `Answering ${answer.code} over ${transport}: ${what}`,
        escapeForLog((error as Error).stack ?? ''),
      );
      return;
    }
    const now = performance.now();
    const entry = this.last.get(answer.code);
    if (entry && now - entry.at < ANSWER_LOG_EVERY_MS) {
      entry.since += 1;
      return;
    }
    const more = entry && entry.since > 0 ? ` (and ${entry.since} more since the last line)` : '';
    this.last.set(answer.code, { at: now, since: 0 });
    this.logger.warn(`Answering ${answer.code} over ${transport}: ${what}${more}`);
  }
}

/** `Name (key "…"): message`, with the key escaped and the message's copy of the key replaced. */
function describeLockError(error: LockError): string {
  const key = error.key === undefined ? undefined : escapeKey(error.key);
  const message = error.key ? error.message.split(error.key).join('…') : error.message;
  return `${error.name}${key ? ` (key ${key})` : ''}: ${escapeForLog(message)}`;
}
