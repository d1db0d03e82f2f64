/**
 * A Redis-style glob (`*`, `?`, `[abc]`, `[^a]`, `[a-z]`, `\` escapes) as a RegExp on the whole
 * string, for list()'s `match`. Matching happens in the process on the registry's entries: never a
 * keyspace SCAN.
 */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) out += escape(glob[++i]!);
    else if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${body.replace(/[\\\]]/g, (m) => `\\${m}`)}]`;
      i = end;
    } else out += escape(c);
  }
  return new RegExp(`^${out}$`, 'u');
}

/** A literal character. Only syntax characters: the 'u' flag refuses any other escape (`\-` too). */
function escape(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, (m) => `\\${m}`);
}
