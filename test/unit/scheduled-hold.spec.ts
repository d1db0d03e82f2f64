/* Unit: the shortest gap between two ticks of a cron expression (the default hold of a skipped tick). */
import { cronPeriodMs } from '../../lib/nest/decorators/scheduled-hold';

describe('cronPeriodMs', () => {
  it.each([
    ['* * * * * *', 1_000],
    ['*/5 * * * * *', 5_000],
    ['0 */15 * * * *', 15 * 60_000],
    ['*/10 * * * *', 10 * 60_000],
    ['0 9 * * *', 86_400_000],
    ['0 0 1-5 * * *', 3_600_000],
    ['30 2 * * 1', 86_400_000],
  ])('%s ticks at least every %i ms', (expression, ms) => {
    expect(cronPeriodMs(expression)).toBe(ms);
  });

  it('treats a list or a range as one unit of its field', () => {
    expect(cronPeriodMs('0,30 * * * * *')).toBe(1_000);
    expect(cronPeriodMs('0 0,30 * * * *')).toBe(60_000);
    expect(cronPeriodMs('10-20 * * * * *')).toBe(1_000);
  });

  it('returns undefined for what it cannot read', () => {
    expect(cronPeriodMs('every minute')).toBeUndefined();
    expect(cronPeriodMs('* * *')).toBeUndefined();
  });
});
