// Lock keys are often user data: in a log line they are escaped, so CR/LF or terminal control codes
// in a key cannot forge lines or rewrite what an operator sees.

const MAX_KEY_CHARS = 120;
const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A key for a log line: JSON-quoted, control characters escaped, at most 120 characters. */
export function escapeKey(key: string): string {
  return escapeForLog(JSON.stringify(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key));
}

/** Escapes C0 and C1 control characters (CR, LF, ESC, NEL, …) and the line/paragraph separators. */
export function escapeForLog(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
