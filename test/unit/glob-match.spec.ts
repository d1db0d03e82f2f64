import { globToRegExp } from '../../lib/core/inspection/glob-match';

describe("list()'s match glob", () => {
  it('takes keys with hyphens and other punctuation literally', () => {
    // A hyphen was escaped, which the RegExp's 'u' flag refuses: list({ match: 'a-b' }) threw.
    expect(globToRegExp('order-17').test('order-17')).toBe(true);
    expect(globToRegExp('order-17').test('order_17')).toBe(false);
    expect(globToRegExp('a.b/c(d)|e+f$').test('a.b/c(d)|e+f$')).toBe(true);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
  });

  it('keeps wildcards, classes, ranges and escapes', () => {
    expect(globToRegExp('job-*').test('job-42:x')).toBe(true);
    expect(globToRegExp('job-?').test('job-42')).toBe(false);
    expect(globToRegExp('v[a-c]-[^0]').test('vb-1')).toBe(true);
    expect(globToRegExp('v[a-c]-[^0]').test('vb-0')).toBe(false);
    expect(globToRegExp('a\\*-b').test('a*-b')).toBe(true);
    expect(globToRegExp('a\\*-b').test('ax-b')).toBe(false);
  });
});
