/*
 * The console page in a real browser: Debian's Chromium (/usr/bin/chromium) driven headless by
 * puppeteer-core, nothing downloaded. The page lists the locks another process holds, updates live
 * when one is released elsewhere, and force-releases through its button. The screenshot goes to the
 * ignored .results/console/ (copy it to docs with `npm run figures:copy -- console`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { LockLostError, type LockHandle } from '../../lib/core';
import {
  E2E_LOCK_PREFIX,
  startSampleAppUnderTest,
  type SampleAppUnderTest,
} from '../support/sample-app-under-test';
import { useLockEnv, whenAborted } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const RESULTS = path.resolve(__dirname, '..', '..', '.results', 'console');
const env = useLockEnv({ keyPrefix: E2E_LOCK_PREFIX });

let sample: SampleAppUnderTest | undefined;
let browser: Browser | undefined;
let profile: string | undefined;

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await sample?.close();
  sample = undefined;
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function openConsole(url: string): Promise<Page> {
  profile = mkdtempSync(path.join(tmpdir(), 'ndl-chromium-'));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 620 });
  await page.authenticate({ username: 'ops', password: 'ops' }); // the sample's OperatorGuard
  await page.goto(`${url}/locks`, { waitUntil: 'domcontentloaded' });
  return page;
}

// Browser-side code is given as text: this file is compiled without the DOM library.
const rows = (key: string) =>
  `[...document.querySelectorAll('#locks tr')].filter((r) => r.dataset.key === ${JSON.stringify(key)})`;
const rowCount = (page: Page, key: string) => page.evaluate(`${rows(key)}.length`) as Promise<number>;
const cells = (page: Page, key: string) =>
  page.evaluate(`[...${rows(key)}[0].querySelectorAll('td')].map((td) => td.textContent)`) as Promise<
    string[]
  >;
const text = (id: string) => `(document.getElementById('${id}')?.textContent ?? '')`;

describe('the console page in Chromium', () => {
  it('lists locks live, follows a release elsewhere, and force-releases with a reason', async () => {
    sample = await startSampleAppUnderTest(env.url);
    const batch = env.engine({ app: 'nightly-batch' });
    const reports = env.engine({ app: 'reports' });
    const held: LockHandle[] = [
      await batch.acquire('invoice:2026-11'),
      await batch.acquire('ledger:close', { mode: 'write' }),
      await reports.acquire('export:pdf', { limit: 4, permits: 2 }),
      await reports.acquire('seckill:42', { fair: true }),
    ];
    const [invoice, ledger, exportPdf, seckill] = held;
    const waiting = reports.acquire('invoice:2026-11', { waitMs: 120_000 });
    const reader = batch.acquire('ledger:close', { mode: 'read', waitMs: 120_000 });
    // Should an expectation fail first, closing the engines rejects these; that is not the failure.
    for (const pending of [waiting, reader]) pending.catch(() => undefined);

    const page = await openConsole(sample.url);
    const keys = ['invoice:2026-11', 'ledger:close', 'export:pdf', 'seckill:42'];
    await page.waitForFunction(
      `${keys.map((k) => `${rows(k)}.length === 1`).join(' && ')} && ${text('status')} === 'live'`,
      { timeout: 30_000 },
    );
    // The waiter shows up with the next registry sync.
    const invoiceRow = await waitUntil(async () => {
      const row = await cells(page, 'invoice:2026-11');
      return row[7]?.startsWith('1 (') && row;
    });
    expect(invoiceRow.slice(0, 3)).toEqual([
      'invoice:2026-11',
      'mutex',
      expect.stringContaining(`pid ${process.pid}`),
    ]);
    expect(invoiceRow[5]).toBe(String(invoice!.fencingToken));
    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'console.png') });

    // Released elsewhere: the row goes without a reload.
    await exportPdf!.release();
    await page.waitForFunction(`${rows('export:pdf')}.length === 0`, { timeout: 30_000 });

    // Force release through the button, with a reason.
    const button = '#locks tr[data-key="seckill:42"] button.release';
    await page.click(button); // no reason yet: refused in the page
    await page.waitForFunction(`${text('message')}.includes('needs a reason')`);
    expect(seckill!.signal.aborted).toBe(false);
    // A refresh while the operator types keeps the text, the focus and the caret.
    await page.type('#locks tr[data-key="seckill:42"] input.reason', 'stuck pay');
    await page.evaluate('render()');
    await page.keyboard.type('ment provider');
    await page.click(button);
    const reason = await whenAborted(seckill!.signal);
    expect((reason as LockLostError).reason).toBe('force-released');
    await page.waitForFunction(`${text('message')} === 'Released seckill:42.'`);
    await waitUntil(async () => (await rowCount(page, 'seckill:42')) === 0, { description: 'the row to go' });
    // The audit entry is written after the release; the page shows it with a later refresh.
    const audited = await waitUntil(
      async () => {
        const audit = (await page.evaluate(
          `[...document.querySelectorAll('#audit tr')].map((r) => r.textContent)`,
        )) as string[];
        return audit.find((text) => text.includes('seckill:42'));
      },
      { description: 'the audit row' },
    );
    expect(audited).toContain('stuck payment provider');
    const [entry] = await reports.forceReleases({ key: 'seckill:42' });
    expect(entry).toMatchObject({ by: 'ops', reason: 'stuck payment provider' });

    await invoice!.release();
    await (await waiting).release();
    await ledger!.release();
    await (await reader).release();
  }, 180_000);
});
