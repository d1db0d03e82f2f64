/* Unit: recent hold times per key, the honest "retry after" for a lock the watchdog keeps alive. */
import { HoldTimes } from '../../lib/core/grant/hold-times';

describe('HoldTimes', () => {
  const floor = 20_000; // a renewed watchdog lease never has less left than this

  it('returns a fixed lease as it is: the holder frees it by then', () => {
    expect(new HoldTimes().estimate('k', 1_500, floor)).toBe(1_500);
  });

  it('knows nothing of a watchdog lease without recorded holds, or without a lease', () => {
    const times = new HoldTimes();
    expect(times.estimate('k', 29_000, floor)).toBe(-1);
    expect(times.estimate('k', -1, floor)).toBe(-1);
  });

  it('estimates a watchdog lease by a moving average of the key’s holds', () => {
    const times = new HoldTimes();
    times.record('k', 1_000);
    expect(times.estimate('k', 29_000, floor)).toBe(1_000);
    times.record('k', 2_000);
    expect(times.estimate('k', 29_000, floor)).toBe(1_300);
  });

  it('never estimates past the remaining lease', () => {
    const times = new HoldTimes();
    times.record('k', 60_000);
    expect(times.estimate('k', 25_000, floor)).toBe(25_000);
  });

  it('forgets the least recently updated keys past its bound', () => {
    const times = new HoldTimes();
    times.record('first', 500);
    for (let i = 0; i < 1_000; i++) times.record(`k${i}`, 100);
    expect(times.estimate('first', 29_000, floor)).toBe(-1);
    expect(times.estimate('k999', 29_000, floor)).toBe(100);
  });
});
