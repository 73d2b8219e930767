/**
 * The console's speed in a browser (issue #33): what its first load transfers, and how long
 * each page takes to show its data, with CUSTOMERS (100,000) customers on the embedded default.
 *
 *   npm run build && node bench/console/pages.js
 *
 * Runs services/standalone/dist/main.js as `npm start` does, on a fresh data directory, and
 * Debian's chromium (CHROMIUM_PATH, default /usr/bin/chromium) through playwright-core, headless.
 * Set-up, once and not timed, through the API: CUSTOMERS customers (POST /v1/customers, 16 at a
 * time), a meter, a plan of a fixed and a usage price, SUBSCRIBED (20) of the customers
 * subscribed, EVENTS (1,000,000) events of theirs (bulks of 1,000), their first period billed
 * (POST /v1/cron/bill-subscriptions), and a webhook endpoint nothing listens on.
 *
 * Measured, per run:
 *  - first load: a new browser context opens /console/ and enters the key; the bytes of every
 *    script and style sheet as they crossed the wire (compressed), summed (goal < 300 KB);
 *  - each page of PAGES: SAMPLES (30) visits, each from another page by its hash route, timed
 *    from the route's change to the page showing its data (its heading there and nothing
 *    `aria-busy`): p50, p95, max (goal: p95 < 1 s).
 * Prints a JSON line per run and a table of the worst of RUNS (3) runs, each in a fresh browser
 * context on the same set-up and process.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { inParallel, percentile } = require('../common');
const { MAIN, client, cpuModel, start, stop } = require('../embedded/process');

const RUNS = Number(process.env.RUNS || 3);
const CUSTOMERS = Number(process.env.CUSTOMERS || 100_000);
const SUBSCRIBED = Number(process.env.SUBSCRIBED || 20);
const EVENTS = Number(process.env.EVENTS || 1_000_000);
const SAMPLES = Number(process.env.SAMPLES || 30);
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const FIRST_LOAD_GOAL_KB = 300;
const PAGE_GOAL_MS = 1000;
/** In the page: nothing is loading (the console marks a loading part `aria-busy`); a function, not a string (the CSP forbids eval). */
const NOT_BUSY = () => !globalThis.document.querySelector('[aria-busy="true"]');

/** The pages timed: their hash route (from the set-up's ids) and the heading that shows they are there. */
function pagesOf(ids) {
  return [
    { name: 'customers', hash: '#/customers', heading: 'Customers' },
    { name: 'customer', hash: `#/customers/${ids.customer}`, heading: ids.customerName },
    { name: 'invoices', hash: '#/invoices', heading: 'Invoices' },
    { name: 'invoice', hash: `#/invoices/${ids.invoice}`, heading: `Invoice ${ids.invoiceNumber}` },
    { name: 'overview', hash: '#/overview', heading: 'Overview' },
    { name: 'plans', hash: '#/plans', heading: 'Plans' },
    { name: 'plan', hash: `#/plans/${ids.plan}`, heading: 'Bench' },
    { name: 'meters', hash: '#/meters', heading: 'Meters' },
    { name: 'meter', hash: `#/meters/${ids.meter}`, heading: 'API calls' },
    { name: 'events', hash: '#/events', heading: 'Events' },
    { name: 'webhooks', hash: '#/webhooks', heading: 'Webhook endpoints' },
    { name: 'webhook', hash: `#/webhooks/${ids.webhook}`, heading: `Webhook endpoint ${ids.webhookUrl}` },
    { name: 'api-keys', hash: '#/api-keys', heading: 'API keys' },
  ].filter((p) => !process.env.PAGES || process.env.PAGES.split(',').includes(p.name));
}

async function setUp(api) {
  const t0 = performance.now();
  const must = async (method, p, body, want) => {
    const res = await api(method, p, body);
    if (res.status !== want) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  const customers = new Array(CUSTOMERS);
  await inParallel(CUSTOMERS, 16, async (i) => {
    customers[i] = await must('POST', '/v1/customers', { external_customer_id: `bench-console-${i}`, name: `Customer ${i}`, email: `c${i}@bench.test` }, 201);
  });
  const customersS = (performance.now() - t0) / 1000;
  const meter = await must('POST', '/v1/meters', { name: 'API calls', event_name: 'console_bench_call', aggregation: { type: 'COUNT' } }, 201);
  const fixed = { type: 'FIXED', currency: 'usd', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };
  const usage = { type: 'USAGE', currency: 'usd', amount: '0.01', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.id };
  const plan = await must('POST', '/v1/plans', { name: 'Bench', prices: [fixed, usage] }, 201);
  const subscribed = customers.slice(0, SUBSCRIBED);
  for (const c of subscribed) await must('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id }, 201);
  // Spread over the last 24 hours (the overview's events per hour), 4 bulks at a time.
  const now = Date.now();
  await inParallel(Math.ceil(EVENTS / 1000), 4, async (b) => {
    const events = [];
    for (let j = b * 1000; j < Math.min(EVENTS, (b + 1) * 1000); j += 1) {
      const timestamp = new Date(now - Math.floor(((EVENTS - j) / EVENTS) * 86_400_000)).toISOString();
      events.push({ event_name: 'console_bench_call', external_customer_id: `bench-console-${j % SUBSCRIBED}`, event_id: `cb-${j}`, timestamp });
    }
    await must('POST', '/v1/events/bulk', { events }, 202);
  });
  await must('POST', '/v1/cron/bill-subscriptions', {}, 200);
  // An endpoint nothing listens on: its deliveries fail, for the webhook pages and the overview.
  const webhookUrl = 'http://127.0.0.1:9/billstream-bench';
  const webhook = await must('POST', '/v1/webhook-endpoints', { url: webhookUrl, events: ['customer.created'] }, 201);
  const invoices = await must('GET', `/v1/invoices?customer_id=${subscribed[0].id}`, undefined, 200);
  const invoice = invoices.items[0];
  if (!invoice) throw new Error('no invoice after billing');
  return {
    seconds: { customers: Math.round(customersS), total: Math.round((performance.now() - t0) / 1000) },
    ids: { customer: subscribed[0].id, customerName: subscribed[0].name, invoice: invoice.id, invoiceNumber: invoice.invoice_number, plan: plan.id, meter: meter.id, webhook: webhook.id, webhookUrl },
  };
}

/** Opens the console in a new context and enters the key: the compressed bytes of its scripts and styles. */
async function firstLoad(browser, url, key) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const sizes = [];
  page.on('requestfinished', (request) => {
    if (['script', 'stylesheet'].includes(request.resourceType())) sizes.push(request.sizes().then((s) => ({ url: request.url(), bytes: s.responseBodySize + s.responseHeadersSize })));
  });
  await page.goto(`${url}/console/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Open the console' }).click();
  await page.getByRole('heading', { name: 'Customers' }).waitFor();
  await page.waitForFunction(NOT_BUSY);
  const files = await Promise.all(sizes);
  return { page, context, files, kb: Math.round((files.reduce((a, f) => a + f.bytes, 0) / 1024) * 10) / 10 };
}

/** SAMPLES visits of each page, each from the previous page: ms from the route's change to its data shown. */
async function timePages(page, pages) {
  const out = {};
  for (const p of pages) out[p.name] = [];
  for (let s = 0; s < SAMPLES; s += 1) {
    for (const p of pages) {
      const t0 = performance.now();
      await page.evaluate(`window.location.hash = ${JSON.stringify(p.hash)}`);
      await page.getByRole('heading', { name: p.heading, exact: true }).first().waitFor();
      await page.waitForFunction(NOT_BUSY);
      out[p.name].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(
    Object.entries(out).map(([name, ms]) => {
      const sorted = ms.sort((a, b) => a - b);
      return [name, { n: sorted.length, p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)), max: round(sorted[sorted.length - 1]) }];
    }),
  );
}

const round = (x) => Math.round(x * 10) / 10;

/** One measured run on the set-up stack: a fresh browser context's first load, then every page SAMPLES times. */
async function run(n, browser, proc, setup) {
  const load = await firstLoad(browser, proc.url, proc.key);
  const pages = await timePages(load.page, pagesOf(setup.ids));
  await load.context.close();
  const result = { run: n, first_load_kb: load.kb, first_load_files: load.files.map((f) => `${path.basename(f.url)} ${f.bytes}`), pages, load: os.loadavg().map((l) => l.toFixed(1)).join(' ') };
  console.log(JSON.stringify(result));
  return result;
}

async function main() {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: npm run build first`);
  console.log(`CPU: ${cpuModel()}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${CUSTOMERS} customers, ${EVENTS} events`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-console-bench-'));
  // A loopback http endpoint, as a developer's laptop would have.
  const proc = await start(dataDir, { WEBHOOK_ALLOW_INSECURE: 'true' });
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  const runs = [];
  try {
    // One set-up (minutes at 100,000 customers), then RUNS runs on it, each in a fresh browser context.
    const setup = await setUp(client(proc.url, proc.key));
    console.log(JSON.stringify({ setup_s: setup.seconds }));
    for (let n = 1; n <= RUNS; n += 1) runs.push(await run(n, browser, proc, setup));
  } finally {
    await browser.close();
    await stop(proc.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const worstKb = Math.max(...runs.map((r) => r.first_load_kb));
  console.log(`\n| what | worst of ${RUNS} | goal | met? |\n|---|---|---|---|`);
  console.log(`| first load, scripts and styles (compressed) | ${worstKb} KB | < ${FIRST_LOAD_GOAL_KB} KB | ${worstKb < FIRST_LOAD_GOAL_KB ? 'yes' : 'no'} |`);
  for (const name of Object.keys(runs[0].pages)) {
    const p95 = Math.max(...runs.map((r) => r.pages[name].p95));
    const p50 = Math.max(...runs.map((r) => r.pages[name].p50));
    console.log(`| ${name}: data shown, p95 (p50) | ${p95} ms (${p50} ms) | < ${PAGE_GOAL_MS} ms | ${p95 < PAGE_GOAL_MS ? 'yes' : 'no'} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
