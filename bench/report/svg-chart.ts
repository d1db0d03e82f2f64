import type { BenchResults } from './results';

/** One panel: a value per library and critical-section length. */
interface Panel {
  title: string;
  value: (lib: BenchResults['libraries'][number], cs: number) => number | undefined;
  log?: boolean;
  unit: string;
}

const OURS_COLORS = ['#7fb3e6', '#1f5fa8'];
const PEER_COLORS = ['#d0d0d0', '#808080'];
const W = 920;
const LABEL_W = 270;
const BAR_H = 9;
const ROW_GAP = 8;

/**
 * The contention results as a self-contained SVG (no chart library): wait p99 (log scale),
 * acquisitions per second and Redis CPU per acquisition, one pair of bars per library
 * (critical section 0 ms light, 2 ms dark); our library in blue.
 */
export function contentionChart(r: BenchResults): string {
  const libs = r.libraries;
  const csList = libs[0]?.contention.map((c) => c.csMs) ?? [];
  const get = (l: BenchResults['libraries'][number], cs: number) => l.contention.find((c) => c.csMs === cs);
  const panels: Panel[] = [
    {
      title: 'Wait p99 (ms, log scale) — lower is better',
      value: (l, cs) => get(l, cs)?.wait.p99,
      log: true,
      unit: 'ms',
    },
    {
      title: 'Acquisitions per second — higher is better',
      value: (l, cs) => get(l, cs)?.acqPerSec,
      unit: '/s',
    },
    {
      title: 'Redis CPU per acquisition (µs) — lower is better',
      value: (l, cs) => get(l, cs)?.cpuUsPerAcq,
      unit: 'µs',
    },
  ];
  const rowH = csList.length * BAR_H + ROW_GAP;
  const panelH = 34 + libs.length * rowH;
  const c = r.meta.contention;
  const head = 64;
  const H = head + panels.length * (panelH + 16) + 10;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="bold">Contention: ${c.processes * c.callersPerProcess} callers in ${c.processes} processes on one key</text>`,
    `<text x="12" y="40" fill="#444">${esc(`${r.meta.date.slice(0, 10)} · ${r.meta.machine.nproc} cores ${r.meta.machine.cpuModel} · Node ${r.meta.machine.node} · Redis ${r.meta.machine.redis} · profile ${r.meta.profile}`)}</text>`,
  ];
  csList.forEach((cs, i) => {
    const x = 12 + i * 190;
    parts.push(
      `<rect x="${x}" y="48" width="12" height="9" fill="${PEER_COLORS[i % 2]}"/><rect x="${x + 14}" y="48" width="12" height="9" fill="${OURS_COLORS[i % 2]}"/>`,
    );
    parts.push(`<text x="${x + 32}" y="56">critical section ${cs} ms</text>`);
  });
  panels.forEach((panel, p) => {
    const top = head + p * (panelH + 16);
    parts.push(`<text x="12" y="${top + 16}" font-size="13" font-weight="bold">${esc(panel.title)}</text>`);
    const values = libs.flatMap((l) => csList.map((cs) => panel.value(l, cs) ?? 0)).filter((v) => v > 0);
    const max = Math.max(...values, 1);
    const min = Math.max(Math.min(...values, max), 0.01);
    const plotW = W - LABEL_W - 90;
    const scale = (v: number) => {
      if (!(v > 0)) return 0;
      if (!panel.log) return (v / max) * plotW;
      const lo = Math.log10(min) - 0.3;
      return Math.max(2, ((Math.log10(v) - lo) / (Math.log10(max) - lo)) * plotW);
    };
    libs.forEach((l, li) => {
      const y = top + 28 + li * rowH;
      const ours = l.id.startsWith('nestjs-distributed-lock');
      parts.push(
        `<text x="${LABEL_W - 8}" y="${y + BAR_H + 2}" text-anchor="end"${ours ? ' font-weight="bold"' : ''}>${esc(l.name)}</text>`,
      );
      csList.forEach((cs, ci) => {
        const v = panel.value(l, cs);
        const by = y + ci * BAR_H;
        const color = (ours ? OURS_COLORS : PEER_COLORS)[ci % 2];
        const w = scale(v ?? 0);
        parts.push(
          `<rect x="${LABEL_W}" y="${by}" width="${w.toFixed(1)}" height="${BAR_H - 1}" fill="${color}"/>`,
        );
        parts.push(
          `<text x="${(LABEL_W + w + 4).toFixed(1)}" y="${by + BAR_H - 1}" font-size="9" fill="#333">${v === undefined ? '–' : label(v)} ${panel.unit}</text>`,
        );
      });
    });
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function label(v: number): string {
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return String(Math.round(v));
  return String(Math.round(v * 10) / 10);
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
