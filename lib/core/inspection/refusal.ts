/**
 * The server's own answer (an ACL `NOPERM`, an `EXECABORT` with its cause, `READONLY`, ...), with
 * the causes of a discarded transaction; undefined for a lost connection or a timeout, which the
 * connection events report.
 */
export function refusalOf(err: unknown): string | undefined {
  if (!(err instanceof Error) || !(err.name === 'ReplyError' || /^[A-Z]{2,} /.test(err.message))) {
    return undefined;
  }
  const causes = (err as { previousErrors?: unknown[] }).previousErrors ?? [];
  const texts = causes.map((c) => (c instanceof Error ? c.message : String(c)));
  return [err.message, ...new Set(texts)].join('; ');
}
