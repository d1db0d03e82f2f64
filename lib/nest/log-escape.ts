// Lock keys are often user data: in a log line they are escaped (core's quoteKey / printable), so
// CR/LF or terminal control codes in a key cannot forge lines or rewrite what an operator sees.
// Past the core's public surface: quoteKey and printable are the core's one way of escaping user text.
import { printable, quoteKey } from '../core/internal';

const MAX_KEY_CHARS = 120;

/** A key for a log line: quoted, control characters escaped, at most 120 characters. */
export function escapeKey(key: string): string {
  return quoteKey(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key);
}

/** Escapes C0 and C1 control characters (CR, LF, ESC, NEL, …) and the line/paragraph separators. */
export function escapeForLog(text: string): string {
  return printable(text);
}
