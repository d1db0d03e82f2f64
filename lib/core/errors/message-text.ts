// How user text and values are written into messages and log lines: quoted and escaped, so a key
// can never start a new line or forge an entry. Every error message and every check uses these.

/**
 * `text` in double quotes with every control character (C0, DEL, C1, U+2028/U+2029), quote and
 * backslash escaped: a key or any user text in a message or log line can never start a new line or
 * forge an entry. The one place messages quote keys.
 */
export function quoteKey(text: string): string {
  return JSON.stringify(String(text)).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * `text` with control characters and backslashes escaped as in quoteKey, without the surrounding quotes
 * and leaving the quotes inside as they are (for log lines and messages: a quote forges no line).
 */
export function printable(text: string): string {
  return quoteKey(text).slice(1, -1).replace(/\\"/g, '"');
}

/** A short, safe description of a value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${quoteKey(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  return `${typeof value} ${String(value)}`;
}
