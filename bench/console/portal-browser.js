/**
 * The browser half of bench/console/portal.js: each portal page opened by a fresh navigation to
 * its SPA route (`/portal/s/{session}#/{route}`, after about:blank, so the document, the scripts
 * and every call of the page are loaded again) in Debian's chromium through playwright-core,
 * headless, as the e2e tests launch it; timed from the navigation's start until the page's data
 * is visible: selectors that appear only once the data is rendered (never the "Loading…" status).
 */
const { performance } = require('node:perf_hooks');
const { percentile } = require('../common');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Each page: its route and what is visible only with its data (every selector). */
const BROWSER_PAGES = [
  { name: 'invoices', route: 'invoices', shown: ['table:has(caption:text-is("Your invoices")) tbody tr', 'role=status >> text=/ of [0-9,]+$/', 'text=/No credit notes|Your credit notes/'] },
  { name: 'subscriptions', route: 'subscriptions', shown: ['table:has(caption:text-is("Your subscriptions and their next invoice")) tbody tr'] },
  { name: 'usage', route: 'usage', shown: ['[data-testid=usage-chart] rect', 'text=/So far this period: \\$/'] },
  { name: 'wallets (with holds)', route: 'wallets', shown: ['[data-testid=real-time-balance]', '[data-testid=hold-credits]'] },
  { name: 'entitlements', route: 'entitlements', shown: ['table:has(caption:text-is("What your plans include")) tbody tr'] },
].filter((p) => !process.env.PAGES || process.env.PAGES.split(',').some((n) => p.name.startsWith(n)));

async function launch() {
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

const round = (x) => Math.round(x * 10) / 10;

/** One run: a fresh context whose tab takes the session's token once, then SAMPLES fresh navigations a page. */
async function browserRun(browser, sessionUrl, samples, cpu) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  const base = sessionUrl.split('#')[0];
  await tab.goto(sessionUrl);
  await tab.locator(BROWSER_PAGES[0]?.shown[0] ?? 'main').first().waitFor({ timeout: 60_000 });
  const view = async (page) => {
    await tab.goto('about:blank');
    const t0 = performance.now();
    await tab.goto(`${base}#/${page.route}`);
    await Promise.all(page.shown.map((s) => tab.locator(s).first().waitFor({ state: 'visible', timeout: 60_000 })));
    return performance.now() - t0;
  };
  const pages = {};
  for (const page of BROWSER_PAGES) {
    await view(page);
    const before = cpu();
    const ms = [];
    for (let s = 0; s < samples; s += 1) ms.push(await view(page));
    const after = cpu();
    const sorted = ms.sort((a, b) => a - b);
    pages[page.name] = { n: sorted.length, p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)), max: round(sorted[sorted.length - 1]), cpu_ms_per_view: round(((after - before) * 1000) / samples) };
  }
  await context.close();
  if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`);
  return pages;
}

module.exports = { BROWSER_PAGES, browserRun, launch };
