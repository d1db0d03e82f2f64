/** A Markdown table with padded columns (readable on a terminal, pasteable into docs). */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(fmt))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: (string | number)[]) =>
    `| ${r.map((c, i) => String(c ?? '').padEnd(widths[i]!)).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
}

function fmt(v: string | number): string {
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return '–';
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : String(v);
}
