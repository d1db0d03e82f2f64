import type { LoggerService } from '@nestjs/common';

/** One line Nest logged. */
export interface LoggedLine {
  level: 'log' | 'error' | 'warn';
  message: string;
  context?: string;
}

/** A Nest logger that keeps every line, for assertions on what a call logged. */
export class CapturingLogger implements LoggerService {
  readonly lines: LoggedLine[] = [];

  log(message: unknown, ...rest: unknown[]): void {
    this.push('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.push('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.push('warn', message, rest);
  }
  debug(): void {}
  verbose(): void {}

  /** Lines logged at `level` after line number `from`. */
  since(from: number, level?: LoggedLine['level']): LoggedLine[] {
    return this.lines.slice(from).filter((l) => !level || l.level === level);
  }

  private push(level: LoggedLine['level'], message: unknown, rest: unknown[]): void {
    const last = rest[rest.length - 1];
    const text =
      message instanceof Error ? `${message.name}: ${message.message}\n${message.stack}` : String(message);
    const context = typeof last === 'string' ? last : undefined;
    // A stack passed as the second argument is part of what an operator reads.
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? `\n${rest[0]}` : '';
    this.lines.push({ level, message: text + stack, context });
  }
}
