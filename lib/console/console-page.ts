import type { ResolvedConsoleOptions } from './console-options';

/**
 * The console page: one HTML document with its script and styles inline — no build step, no asset
 * or font from the internet. It reads the JSON API relative to its own URL (so a global prefix
 * works), re-reads on every server-sent event and every `refreshMs`, and renders with textContent
 * only (lock keys are user data).
 */
export function renderConsolePage(options: ResolvedConsoleOptions): string {
  const config = JSON.stringify({
    allowForceRelease: options.allowForceRelease,
    refreshMs: options.refreshMs,
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1d2330;background:#f7f8fa}
h1{font-size:1.3rem;margin:0 0 .75rem}h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
.bar{display:flex;gap:.5rem;align-items:center;margin-bottom:.75rem;flex-wrap:wrap}
input,select,button{font:inherit;padding:.25rem .5rem;border:1px solid #c5cad3;border-radius:4px;background:#fff}
button.release{background:#b42318;color:#fff;border-color:#b42318;cursor:pointer}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 2px #0001}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #e4e7ec;vertical-align:top}
th{background:#eef0f4;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}.kind{font-weight:600}
#status{font-size:.85rem;padding:.1rem .5rem;border-radius:999px;background:#e4e7ec}
#status.live{background:#d1fadf;color:#05603a}#status.down{background:#fee4e2;color:#912018}
#message{min-height:1.2rem;font-size:.9rem}td.action{white-space:nowrap}.empty{color:#667085;text-align:center;padding:1rem}
</style></head>
<body>
<h1>${escapeHtml(options.title)} <span id="status">connecting</span></h1>
<div class="bar">
  <input id="match" placeholder="key glob, e.g. seckill:*" aria-label="Filter by key">
  <select id="kind" aria-label="Filter by kind"><option value="">every kind</option>
    <option>mutex</option><option>token</option><option>read-write</option><option>fair</option><option>semaphore</option></select>
  <span id="summary"></span>
</div>
<div id="message" role="status"></div>
<table><thead><tr><th>Key</th><th>Kind</th><th>Owner</th><th>Held for</th><th>Lease left</th>
<th>Fencing token</th><th>Holds</th><th>Waiters</th><th></th></tr></thead><tbody id="locks"></tbody></table>
<h2>Recent force releases</h2>
<table><thead><tr><th>When</th><th>Key</th><th>Kind</th><th>By</th><th>Reason</th><th>Evicted</th><th>Fence now</th></tr></thead>
<tbody id="audit"></tbody></table>
<script>
const CONFIG = ${config.replace(/</g, '\\u003c')};
const base = location.pathname.replace(/\\/+$/, '');
const $ = (id) => document.getElementById(id);
let locks = [];
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; }
function span(ms) { if (!(ms > 0)) return '–'; const s = Math.floor(ms / 1000); return s < 60 ? s + ' s' : s < 3600 ? Math.floor(s / 60) + ' min ' + (s % 60) + ' s' : Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min'; }
function who(o) { return o.host ? o.app + '@' + o.host + ' (pid ' + o.pid + ')' : 'engine ' + o.engine; }
function render() {
  const body = $('locks');
  // Keep what an operator is typing across re-renders: the text, the focus and the caret.
  const rowOf = (i) => i.closest('tr').dataset.key + '|' + i.closest('tr').dataset.kind;
  const typed = new Map([...body.querySelectorAll('input.reason')].map((i) => [rowOf(i), i.value]));
  const active = document.activeElement;
  const focused = active && active.matches && active.matches('#locks input.reason') ? { row: rowOf(active), start: active.selectionStart, end: active.selectionEnd } : undefined;
  body.replaceChildren();
  const now = Date.now();
  let refocus;
  if (locks.length === 0) { const tr = el('tr'); const td = el('td', 'No lock is held.', 'empty'); td.colSpan = 9; tr.append(td); body.append(tr); }
  for (const lock of locks) {
    lock.holders.forEach((h, i) => {
      const tr = el('tr'); tr.dataset.key = lock.key; tr.dataset.kind = lock.kind;
      const key = el('td'); key.append(el('code', lock.key)); tr.append(key, el('td', lock.kind + (h.mode ? ' (' + h.mode + ')' : '') + (h.permits ? ' ×' + h.permits : ''), 'kind'));
      const held = el('td', h.acquiredAt ? span(now - h.acquiredAt) : '–', 'num held'); held.dataset.since = h.acquiredAt;
      const left = el('td', span(h.expiresAt - now), 'num left'); left.dataset.until = h.expiresAt;
      tr.append(el('td', who(h.owner)), held, left);
      tr.append(el('td', h.fencingToken || '–', 'num'), el('td', h.holdCount, 'num'));
      const waiters = Object.entries(lock.waiters.byOwner).map(([o, n]) => n + ' from ' + o).join(', ');
      tr.append(el('td', i === 0 ? (lock.waiters.total ? lock.waiters.total + ' (' + waiters + ')' : '0') : ''));
      const action = el('td', undefined, 'action');
      if (CONFIG.allowForceRelease && i === 0) {
        const reason = el('input'); reason.className = 'reason'; reason.value = typed.get(lock.key + '|' + lock.kind) || ''; reason.placeholder = 'reason (required)'; reason.setAttribute('aria-label', 'Reason for ' + lock.key);
        const button = el('button', 'Force release', 'release');
        button.addEventListener('click', () => release(lock, reason.value));
        action.append(reason, ' ', button);
        if (focused && focused.row === lock.key + '|' + lock.kind) refocus = () => { reason.focus(); reason.setSelectionRange(focused.start, focused.end); };
      }
      tr.append(action); body.append(tr);
    });
  }
  if (refocus) refocus();
  $('summary').textContent = locks.length + ' held';
}
function renderAudit(entries) {
  const body = $('audit'); body.replaceChildren();
  for (const a of entries) {
    const tr = el('tr'); tr.dataset.key = a.key;
    const key = el('td'); key.append(el('code', a.key));
    tr.append(el('td', new Date(a.at).toLocaleString()), key, el('td', a.kind), el('td', a.by), el('td', a.reason));
    tr.append(el('td', a.evicted.map((e) => e.label + ' (token ' + e.fencingToken + ')').join(', ')), el('td', a.fence, 'num'));
    body.append(tr);
  }
}
let refreshes = 0;
async function refresh() {
  const mine = ++refreshes; // answers can overtake each other: only the newest request renders
  const q = new URLSearchParams({ limit: '500' });
  if ($('match').value) q.set('match', $('match').value);
  if ($('kind').value) q.set('kind', $('kind').value);
  try {
    const res = await fetch(base + '/api/locks?' + q, { credentials: 'same-origin', headers: { accept: 'application/json' } });
    const data = await res.json();
    if (!res.ok) throw new Error(data.message || res.statusText);
    if (mine !== refreshes) return;
    locks = data.locks; render(); renderAudit(data.forceReleases || []);
  } catch (e) { $('message').textContent = 'Could not read the locks: ' + e.message; }
}
async function release(lock, reason) {
  if (!reason.trim()) { $('message').textContent = 'A force release needs a reason.'; return; }
  const res = await fetch(base + '/api/locks/' + encodeURIComponent(lock.key) + '/release', {
    method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reason, kind: lock.kind }) });
  const data = await res.json().catch(() => ({}));
  $('message').textContent = res.ok ? (data.released ? 'Released ' + lock.key + '.' : lock.key + ' was not held any more.') : 'Refused: ' + (data.message || res.status);
  refresh();
}
function connect() {
  const events = new EventSource(base + '/api/events');
  events.onopen = () => { $('status').textContent = 'live'; $('status').className = 'live'; };
  events.onerror = () => { $('status').textContent = 'reconnecting'; $('status').className = 'down'; };
  for (const type of ['acquired', 'released', 'lost', 'forceReleased']) events.addEventListener(type, () => refresh());
}
$('match').addEventListener('change', refresh); $('kind').addEventListener('change', refresh);
function tick() {
  const now = Date.now();
  for (const td of document.querySelectorAll('td.held')) if (+td.dataset.since) td.textContent = span(now - td.dataset.since);
  for (const td of document.querySelectorAll('td.left')) td.textContent = span(td.dataset.until - now);
}
setInterval(refresh, CONFIG.refreshMs); setInterval(tick, 1000);
refresh(); connect();
</script>
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
