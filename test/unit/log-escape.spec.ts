/*
 * Keys in log lines: user data in a key (CR/LF, terminal escape codes, Unicode line separators)
 * cannot start a forged line or rewrite the terminal; long keys are cut.
 */
import { escapeForLog, escapeKey } from '../../lib/nest/log-escape';

describe('log escaping', () => {
  it('escapes C0 and C1 control characters and line separators, and nothing else', () => {
    const forged = 'order:1\r\n[Nest] 1 - LOG forged\u001b[2J\u0085\u2028\u2029ü✓';
    const escaped = escapeForLog(forged);
    expect(escaped).toBe('order:1\\r\\n[Nest] 1 - LOG forged\\u001b[2J\\u0085\\u2028\\u2029ü✓');
    expect(escaped).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
  });

  it('leaves quotes in a message as they are (a message that quotes a key is logged readable)', () => {
    expect(escapeForLog('did not answer for lock "seckill:phone"')).toBe(
      'did not answer for lock "seckill:phone"',
    );
    expect(escapeForLog('a \\ and a "quote"\n')).toBe('a \\\\ and a "quote"\\n');
  });

  it('quotes a key and cuts it at 120 characters', () => {
    expect(escapeKey('a"b\nc')).toBe('"a\\"b\\nc"');
    const long = escapeKey('k'.repeat(500));
    expect(long).toBe(`"${'k'.repeat(120)}…"`);
  });
});
