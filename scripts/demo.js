#!/usr/bin/env node
/**
 * One file: the demo is the story a new user reads beside its output, step by step in the order it runs.
 *
 * First-run demo (`npm run demo`) against a running Billstream stack: creates customers,
 * wallets with prepaid credits, meters, a plan (a monthly platform fee and a price per token)
 * and a webhook endpoint; sends last month's usage as a realistic stream of events in bulk with
 * a progress bar; subscribes each customer from the start of last month, so that creating the
 * subscription invoices the month that has ended; has the period job finalize the invoices
 * (the wallets' credits pay the usage lines), records an offline payment for one, then prints
 * invoices, balances, usage and the webhooks it received (signatures checked).
 *
 * Then this month, for a fourth customer (steps 12-16): a Starter plan whose fee is billed in
 * advance, subscribed 22 days ago (anniversary, so that the upgrade always happens at the same
 * point of the period, whatever the day the demo runs) with a 20 % coupon; a credit grant that
 * creates its PRE_PAID wallet and puts 25 credits in it; an upgrade to Growth today, previewed
 * then made, whose invoice bills Starter's usage so far, credits Starter's unused days
 * (PRORATION_CREDIT) and charges Growth's fee for the days left; the invoice finalized (the
 * grant's credits pay the usage) and paid offline; and a credit note on the paid invoice that
 * gives the credits and the money back to the wallet. Each figure is checked against the one
 * computed here from the prices, the coupon and the days left.
 *
 * Then (steps 17-19) a pay-as-you-go customer whose usage crosses a threshold mid-period gets a
 * SUBSCRIPTION_THRESHOLD invoice at once, pays it by card (a PENDING PROVIDER payment that the
 * processor's webhook settles with POST /v1/payments/{id}/succeed), and the invoice's PDF,
 * frozen at finalization, is written to a file whose path is printed.
 *
 * Then (steps 20-22) taxes: a seller in Germany turns them on with the EU reverse charge and a
 * 19 % VAT rate; a German customer is invoiced with VAT, a French business with a VAT id is
 * reverse charged; the tax report (GET /v1/reports/taxes) and its TAX_REPORT CSV export show
 * what to declare. Each of those figures is checked against one computed from the rate: a
 * mismatch fails the demo (exit 1).
 *
 *   BILLSTREAM_URL      gateway base URL (default http://127.0.0.1:8080)
 *   BILLSTREAM_API_KEY  API key with `*` (default: the key `npm start` keeps in $DATA_DIR/dev-api-key,
 *                       else BILLSTREAM_API_KEY of the .env of `npm run compose:env`)
 *   DEMO_EVENTS         number of usage events (default 5000)
 *   DEMO_WEBHOOK_LISTEN host:port the webhook receiver listens on (default 127.0.0.1:0)
 *   DEMO_WEBHOOK_URL    the URL the endpoint is registered with (default http://<that address>/...):
 *                       with docker compose the dispatcher's loopback is not this machine's, so
 *                       deploy/compose/ci.sh relays a loopback port of its container to the receiver
 *
 * Webhooks need the stack started with WEBHOOK_ALLOW_INSECURE=true: the receiver is a plain
 * http server on this machine's loopback. Without it, the demo says so and goes on.
 *
 * Every call goes through @billstream/client (libs/client, built by `npm run build`): typed
 * calls with retries, the usage event batcher and webhook verification, as a system that
 * calls Billstream would use them.
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const cliProgress = require('cli-progress');
const { parseEnv } = require('./compose-env');
const { BillstreamError, createClient, verifyWebhook } = loadClient();

function loadClient() {
  try {
    return require('@billstream/client');
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
    process.stderr.write('The demo calls Billstream through @billstream/client (libs/client): build it first with `npm run build`.\n');
    process.exit(1);
  }
}

const BASE_URL = (process.env.BILLSTREAM_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const EVENT_COUNT = Number(process.env.DEMO_EVENTS || 5000);
const [WEBHOOK_HOST, WEBHOOK_PORT] = (process.env.DEMO_WEBHOOK_LISTEN || '127.0.0.1:0').split(':');
const BATCH_SIZE = 500;
/** The plan: a platform fee billed at the end of each month, and 0.10 per 1,000 tokens. */
const PLATFORM_FEE = '49';
const PRICE_PER_TOKEN = '0.0001';
/** Days a finalized invoice has before it is due (the subscriptions' payment_terms_days). */
const PAYMENT_TERMS_DAYS = 30;
const RUN = `${new Date().toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(3).toString('hex')}`;
const CUSTOMERS = [
  { key: 'acme', name: 'Acme Corp', email: 'billing@acme.example', share: 0.6, credits: '500' },
  { key: 'globex', name: 'Globex Inc', email: 'ap@globex.example', share: 0.3, credits: '400' },
  { key: 'initech', name: 'Initech LLC', email: 'finance@initech.example', share: 0.1, credits: '400' },
];

const tty = process.stdout.isTTY;
const bold = (s) => (tty ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (tty ? `\x1b[2m${s}\x1b[0m` : s);
const say = (s = '') => process.stdout.write(`${s}\n`);
const step = (n, title) => say(`\n${bold(`${n}. ${title}`)}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class DemoStop extends Error {}

/**
 * BILLSTREAM_API_KEY; else the development key of `npm start` in $DATA_DIR/dev-api-key; else
 * BILLSTREAM_API_KEY of the .env that `npm run compose:env` wrote for docker compose. There is
 * no default key (ADR 0034).
 */
function apiKey() {
  if (process.env.BILLSTREAM_API_KEY) return process.env.BILLSTREAM_API_KEY.trim();
  const file = path.resolve(process.env.DATA_DIR || '.data', 'dev-api-key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const dotEnv = path.resolve(__dirname, '..', '.env');
  const fromDotEnv = fs.existsSync(dotEnv) ? parseEnv(fs.readFileSync(dotEnv, 'utf8')).BILLSTREAM_API_KEY : undefined;
  if (fromDotEnv) return fromDotEnv.trim();
  throw new DemoStop(
    [
      'No API key: set BILLSTREAM_API_KEY, or run the demo beside the data directory of `npm start`',
      `(it keeps its development key in ${file}).`,
      `With docker compose the gateway ensures BILLSTREAM_API_KEY of ${dotEnv} (written by \`npm run compose:env\`).`,
    ].join('\n'),
  );
}

/** The client of the demo: the API key, retries on 429/503/no answer for what is safe to repeat. */
let billstream;

/**
 * The answer of a call that must succeed (`call` makes it through the client). A route the
 * stack lacks stops only this part of the demo; no answer or a refused key stops the demo.
 */
async function must(what, call) {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof BillstreamError)) throw err;
    if (err.status === 0) {
      throw new DemoStop(`Cannot reach Billstream at ${BASE_URL} (${err.message}). Start it with \`npm start\` or \`docker compose up\`.`);
    }
    if (err.status === 404 && /^No route for/.test(err.message)) throw new MissingApi(what, err);
    if (err.status === 401 || err.status === 403) throw new DemoStop(`${what}: ${err.message}. The demo needs a key with the * permission.`);
    throw new Error(`${what}: ${err.status} ${err.message} (request ${err.requestId})`);
  }
}

class MissingApi extends Error {
  constructor(what, err) {
    super(`${what}: this stack has no such API yet (${err.message}); skipping this part.`);
  }
}

const byId = (id) => ({ params: { path: { id } } });
const meterUsage = (meter, customer, window) =>
  billstream.POST('/v1/meters/{id}/usage', { ...byId(meter.id), body: { external_customer_id: customer.externalId, ...window } });

/** Runs one part of the demo; a missing API or a refused call is reported and the demo goes on. */
async function part(fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DemoStop) throw err;
    say(`   ${err instanceof MissingApi ? '!' : '✗'} ${err.message}`);
    return undefined;
  }
}

// ---------------------------------------------------------------- webhook receiver

/** A receiver that verifies each delivery (both signatures, timestamp within 5 minutes). */
function startReceiver() {
  const received = new Map();
  let secret;
  let badSignatures = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let envelope;
      try {
        envelope = verifyWebhook(Buffer.concat(chunks), req.headers, secret ?? '', { toleranceSeconds: 300 });
      } catch {
        badSignatures++;
        res.writeHead(401).end();
        return;
      }
      // A retried delivery keeps its envelope id: keyed by it, each event counts once.
      received.set(envelope.id, envelope);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  });
  return new Promise((resolve) => {
    server.listen(Number(WEBHOOK_PORT || 0), WEBHOOK_HOST, () => {
      resolve({
        url: process.env.DEMO_WEBHOOK_URL || `http://${WEBHOOK_HOST}:${server.address().port}/billstream-webhooks`,
        received,
        setSecret: (s) => (secret = s),
        badSignatures: () => badSignatures,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

// ---------------------------------------------------------------- usage stream

/** A small seeded generator, so that one run's stream is reproducible from its seed. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` events spread over `period` (last month), each a request with its token count. */
function usageStream(customers, count, period, { seed = 0xb111, idPrefix = `demo-${RUN}` } = {}) {
  const rnd = random(seed);
  const events = [];
  for (let i = 0; i < count; i++) {
    const r = rnd();
    const customer = r < customers[0].share ? customers[0] : r < customers[0].share + customers[1].share ? customers[1] : customers[2];
    const model = rnd() < 0.8 ? 'standard' : 'large';
    // Log-normal-ish token counts: most requests are small, a few are large.
    const tokens = Math.max(20, Math.round(Math.exp(5.8 + rnd() * 1.6 + rnd() * 0.8) * (model === 'large' ? 1.5 : 1)));
    events.push({
      event_id: `${idPrefix}-${i}`,
      event_name: 'api_request',
      external_customer_id: customer.externalId,
      timestamp: new Date(period.start + Math.floor(rnd() * (period.end - period.start))).toISOString(),
      properties: { tokens, model, region: rnd() < 0.7 ? 'eu-west-1' : 'us-east-1' },
      source: 'billstream-demo',
    });
  }
  return events;
}

/**
 * Sends the events through the client's batcher: `enqueue` buffers them and bulk requests of
 * BATCH_SIZE leave as batches fill; `flush` resolves once every one is accepted (202).
 */
async function sendUsage(events) {
  const bar = new cliProgress.SingleBar(
    { format: '   {bar} {percentage}% | {value}/{total} events | {rate} events/s', hideCursor: true, noTTYOutput: true, notTTYSchedule: 1000 },
    cliProgress.Presets.shades_classic,
  );
  const batcher = billstream.events;
  const before = batcher.stats.sent;
  const started = Date.now();
  const show = () => {
    const sent = batcher.stats.sent - before;
    bar.update(sent, { rate: Math.round(sent / Math.max(0.001, (Date.now() - started) / 1000)) });
  };
  bar.start(events.length, 0, { rate: 0 });
  const ticker = setInterval(show, 100);
  try {
    for (const event of events) await batcher.enqueue(event);
    await batcher.flush();
    show();
  } finally {
    clearInterval(ticker);
    bar.stop();
  }
  if (refusedEvents.length > 0) throw new Error(`Sending usage events: ${refusedEvents.length} refused (${refusedEvents[0]})`);
  return (Date.now() - started) / 1000;
}

/** Events the API refused for good (the batcher hands them to onError); the demo sends none. */
const refusedEvents = [];


// ---------------------------------------------------------------- money, time and tables

/** Groups the integer part of a number or decimal string by thousands: 4144829.5 -> 4,144,829.5. */
function grouped(n) {
  const [int, frac] = String(n).split('.');
  return `${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac === undefined ? '' : `.${frac}`}`;
}

/** Invoice amounts are integers in minor units; the demo bills usd, whose minor unit is the cent. */
function usd(minor) {
  const cents = BigInt(minor);
  const abs = cents < 0n ? -cents : cents;
  return `${cents < 0n ? '-' : ''}$${grouped(abs / 100n)}.${String(abs % 100n).padStart(2, '0')}`;
}

/** Last calendar month in UTC: the month the demo's usage falls in, and the period its invoices bill. */
function lastMonth(now) {
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { start, end, name: new Date(start).toLocaleString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }) };
}

const day = (iso) => String(iso).slice(0, 10);

/** Prints rows as columns: the first `left` columns aligned left, the others right. */
function table(rows, { indent = '   ', left = 1 } = {}) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  for (const r of rows) {
    const cells = r.map((cell, i) => (i < left ? String(cell ?? '').padEnd(widths[i]) : String(cell ?? '').padStart(widths[i])));
    say(`${indent}${cells.join('   ').trimEnd()}`);
  }
}

// ---------------------------------------------------------------- the demo

async function waitForUsage(meters, customers, window, expected) {
  const deadline = Date.now() + 60_000;
  let counted = 0;
  while (Date.now() < deadline) {
    counted = 0;
    for (const c of customers) {
      const usage = await must('Reading meter usage', () => meterUsage(meters.requests, c, window));
      counted += Number(usage.value);
    }
    if (counted >= expected) return counted;
    if (tty) process.stdout.write(`\r   aggregated ${grouped(counted)}/${grouped(expected)} events...`);
    await sleep(500);
  }
  say(`\n   ! only ${grouped(counted)} of ${grouped(expected)} events were aggregated after 60 s; billing what is there.`);
  return counted;
}

/** The plan every demo customer subscribes to: both prices billed at the end of each month. */
async function createPlan(tokensMeter) {
  const monthly = { currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' };
  const body = {
    name: `Demo Pro ${RUN}`,
    description: `A ${PLATFORM_FEE} usd platform fee and 0.10 usd per 1,000 tokens, billed at the end of each month`,
    metadata: { source: 'demo' },
    prices: [
      { ...monthly, type: 'FIXED', amount: PLATFORM_FEE, display_name: 'Platform fee' },
      { ...monthly, type: 'USAGE', amount: PRICE_PER_TOKEN, meter_id: tokensMeter.id, display_name: 'Tokens (0.10 per 1,000)' },
    ],
  };
  return must('Creating the plan', () => billstream.POST('/v1/plans', { body }));
}

/**
 * The subscription's invoice for the period starting at `periodStart`, finalized. The period
 * job's run finalizes drafts at once when BILLING_FINALIZE_DELAY is 0s (the default); a stack
 * that holds drafts longer, for late events, gets an explicit finalize.
 */
async function finalizedInvoice(subscriptionId, periodStart) {
  const list = await must('Listing invoices', () => billstream.GET('/v1/invoices', { params: { query: { subscription_id: subscriptionId, limit: 10 } } }));
  const invoice = list.items.find((i) => Date.parse(i.period_start) === periodStart && i.billing_reason === 'SUBSCRIPTION_CYCLE');
  if (!invoice) throw new Error(`Subscription ${subscriptionId} has no invoice for its first period`);
  if (invoice.status !== 'draft') return invoice;
  return finalize(invoice, (id) => say(dim(`   (finalized ${id} with POST /v1/invoices/{id}/finalize: this stack holds drafts for BILLING_FINALIZE_DELAY)`)));
}

/** Finalizes a draft (`onFinalized` told when this call did it); one the period job finalized in between is read again. */
async function finalize(invoice, onFinalized = () => {}) {
  try {
    const finalized = await billstream.POST('/v1/invoices/{id}/finalize', { ...byId(invoice.id), body: {} });
    onFinalized(invoice.id);
    return finalized;
  } catch (err) {
    // 400: the period job finalized it in between.
    if (!(err instanceof BillstreamError && err.status === 400)) await must('Finalizing invoices', () => Promise.reject(err));
  }
  return must('Reading invoices', () => billstream.GET('/v1/invoices/{id}', byId(invoice.id)));
}

async function printInvoice(c) {
  const inv = c.invoice;
  say(`\n   ${bold(inv.invoice_number ?? inv.id)}  ${c.name}  ${day(inv.period_start)} → ${day(inv.period_end)}  ${inv.status}${inv.due_date ? `, due ${day(inv.due_date)}` : ''}`);
  const rows = [['description', 'quantity', 'unit amount', 'amount', 'credits applied']];
  for (const l of inv.line_items) rows.push([l.description, grouped(l.quantity), l.unit_amount, usd(l.amount), l.prepaid_credits_applied ? usd(l.prepaid_credits_applied) : '-']);
  rows.push(['subtotal', '', '', usd(inv.subtotal), '']);
  rows.push(['prepaid credits applied', '', '', usd(-inv.total_prepaid_credits_applied), '']);
  rows.push(['amount due', '', '', usd(inv.amount_due), '']);
  table(rows, { indent: '     ' });
  const tokens = inv.line_items.find((l) => l.price_type === 'USAGE');
  if (tokens && c.tokens !== undefined) {
    say(`     ${tokens.quantity === String(c.tokens) ? '✓' : '✗'} token line quantity ${grouped(tokens.quantity)} = the Tokens meter's ${grouped(c.tokens)} for the period`);
  }
  if (c.wallet) {
    const balance = await must('Reading balances', () => billstream.GET('/v1/wallets/{id}/balance', byId(c.wallet.id)));
    say(`     wallet ${c.wallet.id}: ${c.wallet.credit_balance} → ${balance.credit_balance} credits (it pays ${c.wallet.config?.allowed_price_types?.join(', ') ?? 'USAGE'} lines; the fixed fee stays due)`);
  }
}

// ---------------------------------------------------------------- this month: an upgrade, a coupon, a grant, a credit note

/**
 * The second story, in the current month: a customer starts it on a small plan whose fee is
 * billed in advance, with a coupon; a credit grant fills its wallet; today it upgrades, and the
 * upgrade's invoice bills the old plan's usage so far, credits the unused part of the old fee and
 * charges the new fee for the days left; the invoice is paid, then partly credited back.
 */
const UPGRADER = { key: 'umbrella', name: 'Umbrella Corp', email: 'billing@umbrella.example' };
const TIERS = {
  starter: { name: 'Starter', fee: '29', perToken: '0.0001', per1000: '0.10' },
  growth: { name: 'Growth', fee: '99', perToken: '0.00008', per1000: '0.08' },
};
const COUPON_PERCENT = '20';
const COUPON_MONTHS = 3;
const GRANT_CREDITS = '25';
const MID_MONTH_EVENTS = Math.min(EVENT_COUNT, 300);
const DAY_MS = 86_400_000;

/**
 * How long before the upgrade the Starter subscription started. Its MONTHLY anniversary period
 * (28 to 31 days) then has 6 to 9 days left: the same story on any day of the month (a calendar
 * period would leave the whole month on the 1st and nothing on the 31st), and the unused Starter
 * fee credited never leaves the usage line less than the grant's 25 credits to pay.
 */
const STARTED_DAYS_AGO = 22;

const days = (ms) => (ms / DAY_MS).toFixed(1);
/** Minor units times a decimal factor, rounded half up (the invoices' rounding, for positive amounts). */
const times = (minor, factor) => Math.round(Number(minor) * Number(factor));

/** A plan whose fee is billed at the start of each month (ADVANCE) and its tokens at the end (ARREAR). */
async function createTierPlan(tier, tokensMeter) {
  const monthly = { currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY' };
  const body = {
    name: `Demo ${tier.name} ${RUN}`,
    description: `${tier.fee} usd a month billed in advance and ${tier.per1000} usd per 1,000 tokens in arrear`,
    metadata: { source: 'demo' },
    prices: [
      { ...monthly, invoice_cadence: 'ADVANCE', type: 'FIXED', amount: tier.fee, display_name: `${tier.name} fee` },
      { ...monthly, invoice_cadence: 'ARREAR', type: 'USAGE', amount: tier.perToken, meter_id: tokensMeter.id, display_name: `${tier.name} tokens (${tier.per1000} per 1,000)` },
    ],
  };
  const plan = await must('Creating the plans', () => billstream.POST('/v1/plans', { body }));
  say(`   ✓ ${plan.id}  ${tier.name}: ${tier.fee} usd a month in advance, ${tier.per1000} usd per 1,000 tokens in arrear`);
  return plan;
}

/** The lines of an invoice with their type, proration factor, discount and net amount. */
function printLines(inv, indent = '     ') {
  const short = (text) => (text.length > 38 ? `${text.slice(0, 37)}…` : text);
  const rows = [['description', 'type', 'window', 'factor', 'amount', 'discount', 'net']];
  for (const l of inv.line_items) {
    rows.push([
      short(l.description),
      l.line_type,
      l.period_start && l.period_end ? `${day(l.period_start).slice(5)} → ${day(l.period_end).slice(5)}` : '',
      l.proration_factor ? Number(l.proration_factor).toFixed(4) : '-',
      usd(l.amount),
      l.discount_amount ? usd(-l.discount_amount) : '-',
      usd(l.net_amount),
    ]);
  }
  table(rows, { indent, left: 3 });
  const totals = [
    ['subtotal', usd(inv.subtotal)],
    [`discount (${COUPON_PERCENT} % coupon)`, usd(-inv.total_discount)],
    ...(inv.excess_credit ? [['excess credit (to the wallet)', usd(inv.excess_credit)]] : []),
    ...(inv.total_prepaid_credits_applied ? [['prepaid credits applied', usd(-inv.total_prepaid_credits_applied)]] : []),
    ['total', usd(inv.total)],
  ];
  table(totals, { indent });
}

async function walletOf(customerId) {
  const wallets = await must('Reading wallets', () => billstream.GET('/v1/customers/{id}/wallets', byId(customerId)));
  return wallets.items.find((w) => w.wallet_type === 'PRE_PAID' && w.currency === 'usd');
}

const balanceOf = async (wallet) => (await must('Reading balances', () => billstream.GET('/v1/wallets/{id}/balance', byId(wallet.id)))).credit_balance;

/** Steps 12 to 16; `n` is the first step's number. Each step needs the ones before it. */
async function midMonthStory(n, meters) {
  const started = Date.now() - STARTED_DAYS_AGO * DAY_MS;
  // The subscription's period, from its answer (until then: from its start to a month later).
  const period = { start: started, end: started + 30 * DAY_MS };
  const s = { customer: { ...UPGRADER, externalId: `${UPGRADER.key}-${RUN}` } };

  step(n, `${s.customer.name} on Starter since ${day(new Date(started).toISOString())}, ${STARTED_DAYS_AGO} days ago, with a ${COUPON_PERCENT} % coupon`);
  const subscribed = await part(async () => {
    s.coupon = await must('Creating the coupon', () =>
      billstream.POST('/v1/coupons', {
        body: {
          name: `Launch ${COUPON_PERCENT} % off`,
          code: `LAUNCH${COUPON_PERCENT}-${RUN}`,
          type: 'PERCENTAGE',
          percent_off: COUPON_PERCENT,
          duration: 'REPEATING',
          duration_in_periods: COUPON_MONTHS,
          metadata: { source: 'demo' },
        },
      }),
    );
    say(`   ✓ ${s.coupon.id}  coupon ${s.coupon.code}: ${s.coupon.percent_off} % off the charges of ${COUPON_MONTHS} months`);
    s.starter = await createTierPlan(TIERS.starter, meters.tokens);
    s.growth = await createTierPlan(TIERS.growth, meters.tokens);
    const c = s.customer;
    const customerBody = { external_customer_id: c.externalId, name: c.name, email: c.email, metadata: { source: 'demo' } };
    c.id = (await must('Creating customers', () => billstream.POST('/v1/customers', { body: customerBody }))).id;
    say(`   ✓ ${c.id}  ${c.name} (${c.externalId}), no wallet yet`);

    // The period's usage so far (22 days), sent before the upgrade bills it.
    const usage = { start: period.start, end: Math.max(period.start + 1000, Date.now() - 60_000) };
    const window = { start_time: new Date(usage.start).toISOString(), end_time: new Date(Date.now()).toISOString() };
    const events = usageStream([{ ...c, share: 1 }], MID_MONTH_EVENTS, usage, { seed: 0xc0de, idPrefix: `demo-${RUN}-${c.key}` });
    for (const e of events) await billstream.events.enqueue(e);
    await billstream.events.flush();
    if (refusedEvents.length > 0) throw new Error(`Sending usage events: ${refusedEvents.length} refused (${refusedEvents[0]})`);
    await waitForUsage(meters, [c], window, events.length);
    c.tokens = (await must('Reading meter usage', () => meterUsage(meters.tokens, c, window))).value;
    say(`${tty ? '\r' : ''}   ✓ ${grouped(events.length)} requests of ${grouped(c.tokens)} tokens since ${day(window.start_time)}, aggregated            `);

    const body = {
      customer_id: c.id,
      plan_id: s.starter.id,
      start_date: new Date(period.start).toISOString(),
      billing_cycle: 'anniversary',
      payment_terms_days: PAYMENT_TERMS_DAYS,
      discounts: [{ coupon_id: s.coupon.id }],
      metadata: { source: 'demo' },
    };
    s.subscription = await must('Creating subscriptions', () => billstream.POST('/v1/subscriptions', { body }));
    const sub = s.subscription;
    period.end = Date.parse(sub.current_period_end);
    say(`   ✓ ${sub.id}  ${sub.status} on Starter, period ${day(sub.current_period_start)} → ${day(sub.current_period_end)}`);
    const list = await must('Listing invoices', () => billstream.GET('/v1/invoices', { params: { query: { subscription_id: sub.id, limit: 10 } } }));
    s.opening = list.items.find((i) => i.billing_reason !== 'SUBSCRIPTION_UPDATE');
    const fee = s.opening?.line_items.find((l) => l.price_type === 'FIXED');
    if (fee) {
      s.openingFee = fee;
      say(`   ✓ ${s.opening.invoice_number ?? s.opening.id} (${s.opening.billing_reason}, ${s.opening.status}): the period's Starter fee in advance,`);
      say(`     ${usd(fee.amount)} − ${usd(fee.discount_amount)} coupon = ${usd(fee.net_amount)}`);
      // Paid now: a plan change credits only unused time that was paid (docs/api/plan-changes.md, ADR 0056).
      const opening = s.opening.status === 'draft' ? await finalize(s.opening) : s.opening;
      if (opening.amount_remaining > 0) {
        const payment = { invoice_id: opening.id, amount: opening.amount_remaining, payment_method_type: 'OFFLINE', idempotency_key: `demo-opening-${RUN}-${c.key}` };
        await must('Paying the opening invoice', () => billstream.POST('/v1/payments', { body: payment }));
      }
      s.opening = await must('Reading invoices', () => billstream.GET('/v1/invoices/{id}', byId(opening.id)));
      say(`   ✓ ${s.opening.invoice_number}: ${s.opening.status}, ${usd(s.opening.amount_paid)} paid OFFLINE (a change credits back only time paid for)`);
    }
    return true;
  });

  step(n + 1, `A credit grant: ${GRANT_CREDITS} credits a month into ${s.customer.name}'s wallet`);
  if (!subscribed) say(`   ! skipped: the grant needs the subscription of step ${n}`);
  if (subscribed)
    await part(async () => {
      const body = { subscription_id: s.subscription.id, name: 'Included credits', credits: GRANT_CREDITS, cadence: 'RECURRING', expire_in_days: 45, priority: 1 };
      s.grant = await must('Creating the credit grant', () => billstream.POST('/v1/credit_grants', { body }));
      say(`   ✓ ${s.grant.id}  "${s.grant.name}": ${s.grant.credits} credits each month (${s.grant.cadence}), expiring ${s.grant.expire_in_days} days after the month starts`);
      let app;
      for (let tries = 0; tries < 20; tries++) {
        const apps = await must('Reading the grant', () => billstream.GET('/v1/credit_grants/{id}/applications', byId(s.grant.id)));
        app = apps.items.find((a) => a.status !== 'skipped');
        if (app?.status === 'applied') break;
        await sleep(500);
      }
      if (!app || app.status !== 'applied') throw new Error(`the grant is not applied yet (${app ? app.status : 'no application'})`);
      say(`   ✓ ${app.id}  applied for ${day(app.period_start)} → ${day(app.period_end)}: ${app.credits} credits into ${app.wallet_id}`);
      s.wallet = await walletOf(s.customer.id);
      const txs = await must('Reading wallet transactions', () => billstream.GET('/v1/wallets/{id}/transactions', byId(s.wallet.id)));
      const tx = txs.items.find((t) => t.id === app.wallet_transaction_id) ?? txs.items.find((t) => t.transaction_reason === 'SUBSCRIPTION_CREDIT_GRANT');
      say(`   ✓ ${s.wallet.id}  ${s.wallet.wallet_type} wallet made by the grant: balance ${s.wallet.credit_balance} credits, pays ${s.wallet.config.allowed_price_types.join(', ')} lines`);
      if (tx) say(`     ${tx.id}  ${tx.type} +${tx.credit_amount}  ${tx.transaction_reason}, expires ${tx.expiry_date ? day(tx.expiry_date) : 'never'}`);
    });

  const now = Date.now();
  step(n + 2, `Upgrade to Growth on ${day(new Date(now).toISOString())}, ${days(period.end - now)} of ${days(period.end - period.start)} days left in the period`);
  if (!subscribed) say(`   ! skipped: the upgrade needs the subscription of step ${n}`);
  const upgraded =
    subscribed &&
    (await part(async () => {
      const body = { plan_id: s.growth.id, proration_behavior: 'create_prorations', effective: 'immediately' };
      const preview = await must('Previewing the change', () => billstream.POST('/v1/subscriptions/{id}/change/preview', { ...byId(s.subscription.id), body }));
      say(`   ✓ preview at ${preview.subscription.effective_at}: its invoice would be ${usd(preview.invoice?.total ?? 0)} (${preview.invoice?.line_items.length ?? 0} lines); nothing stored`);
      const change = await must('Changing the plan', () =>
        billstream.POST('/v1/subscriptions/{id}/change', { ...byId(s.subscription.id), body: { ...body, idempotency_key: `demo-upgrade-${RUN}` } }),
      );
      s.subscription = change.subscription;
      s.invoice = change.invoice;
      if (!s.invoice) throw new Error('the change made no invoice');
      const inv = s.invoice;
      const instant = `${inv.period_end.slice(0, 19)}Z`;
      say(`   ✓ now on ${s.subscription.plan_id === s.growth.id ? 'Growth' : s.subscription.plan_id}; the change's invoice ${inv.id} (${inv.billing_reason}, ${inv.status}),`);
      say(`     ${day(inv.period_start)} → ${instant}, the instant of the change:`);
      printLines(inv);

      // What the lines should be, from the period and the instant of the change.
      const t = Date.parse(inv.period_end);
      const s0 = Date.parse(inv.period_start);
      const left = period.end - t;
      const credit = inv.line_items.find((l) => l.line_type === 'PRORATION_CREDIT');
      if (credit && s.openingFee) {
        const r = s.openingFee.net_amount - s.openingFee.credited_amount;
        const expected = -Math.min(times(r, credit.proration_factor ?? left / (period.end - s0)), r);
        say(
          `     ${credit.amount === expected ? '✓' : '✗'} proration credit ${usd(credit.amount)} = −${usd(r)} (the Starter fee after the coupon) × ${days(left)}/${days(period.end - s0)} days unused`,
        );
      }
      const growthFee = inv.line_items.find((l) => l.line_type === 'CHARGE' && l.price_type === 'FIXED');
      if (growthFee?.proration_factor) {
        const expected = times(Number(TIERS.growth.fee) * 100, growthFee.proration_factor);
        say(`     ${growthFee.amount === expected ? '✓' : '✗'} Growth fee ${usd(growthFee.amount)} = $${TIERS.growth.fee}.00 × ${growthFee.proration_factor} (${days(left)} of ${days(period.end - period.start)} days)`);
      }
      const tokens = inv.line_items.find((l) => l.price_type === 'USAGE');
      if (tokens) say(`     ${tokens.quantity === String(s.customer.tokens) ? '✓' : '✗'} Starter tokens ${grouped(tokens.quantity)} = the Tokens meter's ${grouped(s.customer.tokens)} up to the change`);
      if (inv.total_discount) {
        // A coupon takes its share of the charges; the proration credit is of a fee already discounted.
        const base = inv.line_items.filter((l) => l.line_type === 'CHARGE').reduce((sum, l) => sum + l.amount, 0);
        const expected = times(base, Number(COUPON_PERCENT) / 100);
        say(`     ${inv.total_discount === expected ? '✓' : '✗'} coupon ${usd(-inv.total_discount)} = ${COUPON_PERCENT} % of the charges ${usd(base)}`);
      }
      return true;
    }));

  step(n + 3, "Paying the upgrade's invoice: the grant's credits first, the rest offline");
  if (!upgraded) say(`   ! skipped: nothing to pay without the invoice of step ${n + 2}`);
  const paid =
    upgraded &&
    (await part(async () => {
      const before = s.wallet ? await balanceOf(s.wallet) : undefined;
      s.invoice = await finalize(s.invoice);
      const inv = s.invoice;
      say(`   ✓ ${inv.invoice_number}: ${inv.status}, ${usd(inv.total_prepaid_credits_applied)} paid by prepaid credits, ${usd(inv.amount_remaining)} due`);
      if (s.wallet) say(`     wallet ${s.wallet.id}: ${before} → ${await balanceOf(s.wallet)} credits`);
      if (inv.amount_remaining > 0) {
        const body = {
          invoice_id: inv.id,
          amount: inv.amount_remaining,
          payment_method_type: 'OFFLINE',
          reference: `bank transfer for ${inv.invoice_number}`,
          idempotency_key: `demo-payment-${RUN}-${s.customer.key}`,
        };
        const payment = await must('Recording the payment', () => billstream.POST('/v1/payments', { body }));
        say(`   ✓ ${payment.id}  ${usd(payment.amount)} ${payment.payment_method_type}, ${payment.payment_status}`);
        s.invoice = await must('Reading invoices', () => billstream.GET('/v1/invoices/{id}', byId(inv.id)));
      }
      say(`   ✓ ${s.invoice.invoice_number}: ${s.invoice.status}, paid ${usd(s.invoice.amount_paid)} + credits ${usd(s.invoice.total_prepaid_credits_applied)}, remaining ${usd(s.invoice.amount_remaining)}`);
      return s.invoice.status === 'paid';
    }));

  step(n + 4, 'A credit note on the paid invoice: the tokens are on us');
  if (!paid) say(`   ! skipped: the note needs the paid invoice of step ${n + 3}`);
  else
    await part(async () => {
      const inv = s.invoice;
      const creditable = (l) => l.net_amount - l.credited_amount;
      const line = inv.line_items.find((l) => l.price_type === 'USAGE' && creditable(l) > 0) ?? inv.line_items.find((l) => creditable(l) > 0);
      if (!line) {
        say('   - nothing on the invoice to credit');
        return;
      }
      const before = s.wallet ? await balanceOf(s.wallet) : '0';
      const body = {
        invoice_id: inv.id,
        reason: 'PRODUCT_UNSATISFACTORY',
        memo: 'Slow responses this month: the tokens are on us',
        lines: [{ invoice_line_item_id: line.id, amount: creditable(line) }],
        refund: 'WALLET',
        idempotency_key: `demo-credit-note-${RUN}`,
      };
      let note = await must('Issuing the credit note', () => billstream.POST('/v1/credit_notes', { body }));
      for (let tries = 0; note.refund_status === 'pending' && tries < 20; tries++) {
        await sleep(500);
        note = await must('Reading the credit note', () => billstream.GET('/v1/credit_notes/{id}', byId(note.id)));
      }
      say(`   ✓ ${note.credit_note_number}  ${usd(note.amount)} on "${line.description}" (${note.reason}), refund ${note.refund}, ${note.status}:`);
      table(
        [
          ['lowered what was due', usd(note.pre_payment_amount)],
          ['credits given back to the wallet', usd(note.wallet_amount)],
          ['money paid, refunded to the wallet', usd(note.refund_amount)],
        ],
        { indent: '     ' },
      );
      s.wallet = s.wallet ?? (await walletOf(s.customer.id));
      const after = s.wallet ? await balanceOf(s.wallet) : '-';
      say(`   ✓ wallet ${s.wallet?.id}: ${before} → ${after} credits (refund ${note.refund_status}${note.wallet_transaction_id ? `, ${note.wallet_transaction_id}` : ''})`);
      const again = await must('Reading invoices', () => billstream.GET('/v1/invoices/{id}', byId(inv.id)));
      say(`   ✓ ${again.invoice_number}: ${again.status}, credit notes after payment ${usd(again.post_payment_credit_notes_amount)}, amount paid still ${usd(again.amount_paid)}`);
    });
}

// ---------------------------------------------------------------- Billing V: thresholds, a processor payment, the PDF

const PAYG = { key: 'hooli', name: 'Hooli Inc', email: 'ap@hooli.example' };
const PAYG_PER_TOKEN = '0.00002';
const PAYG_THRESHOLD = 500;
const PAYG_EVENTS = 200;
const PAYG_TOKENS = 2000;

/** An invoice's document by its API path, as bytes (the client answers JSON; documents are fetched as they are). */
async function documentBytes(pathname) {
  const res = await fetch(`${BASE_URL}${pathname}`, { headers: { authorization: `Bearer ${apiKey()}` } });
  if (res.status === 404) throw new MissingApi('Reading the invoice document', { message: `No route for ${pathname}` });
  if (!res.ok) throw new Error(`Reading the invoice document: ${res.status} ${await res.text()}`);
  return { bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
}

/**
 * Steps n..n+2: a pay-as-you-go customer whose usage crosses a threshold mid-period (one
 * SUBSCRIPTION_THRESHOLD invoice, before the period ends), that invoice paid through a card
 * processor (a PENDING PROVIDER payment its webhook settles), and its PDF written to a file.
 */
async function collectionStory(n, meters) {
  const s = {};
  step(n, `Progressive billing: ${PAYG.name} pays as it goes, invoiced at ${usd(PAYG_THRESHOLD)} of usage`);
  const made = await part(async () => {
    const planBody = {
      name: `Pay as you go ${RUN}`,
      prices: [{ type: 'USAGE', currency: 'usd', amount: PAYG_PER_TOKEN, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meters.tokens.id, display_name: 'Tokens' }],
    };
    const plan = await must('Creating the plan', () => billstream.POST('/v1/plans', { body: planBody }));
    s.customer = { ...PAYG, externalId: `${PAYG.key}-${RUN}` };
    s.customer.id = (await must('Creating the customer', () => billstream.POST('/v1/customers', { body: { external_customer_id: s.customer.externalId, name: PAYG.name, email: PAYG.email } }))).id;
    // Started an hour ago: the requests of the last minute are inside its first period.
    const subBody = { customer_id: s.customer.id, plan_id: plan.id, start_date: new Date(Date.now() - 3_600_000).toISOString(), usage_thresholds: [{ amount: PAYG_THRESHOLD }], payment_terms_days: 14 };
    s.subscription = await must('Subscribing', () => billstream.POST('/v1/subscriptions', { body: subBody }));
    say(`   ✓ ${s.subscription.id}  ${PAYG.name} on "Pay as you go" (${PAYG_PER_TOKEN} usd a token), threshold ${usd(PAYG_THRESHOLD)}`);
    const now = Date.now();
    const events = Array.from({ length: PAYG_EVENTS }, (_, i) => ({
      event_name: 'api_request',
      external_customer_id: s.customer.externalId,
      event_id: `payg-${RUN}-${i}`,
      timestamp: new Date(now - (PAYG_EVENTS - i) * 100).toISOString(),
      properties: { tokens: PAYG_TOKENS },
    }));
    await sendUsage(events);
    const window = { start_time: s.subscription.current_period_start, end_time: new Date(Date.now() + 60_000).toISOString() };
    const tokens = PAYG_EVENTS * PAYG_TOKENS;
    let counted = 0;
    for (let tries = 0; tries < 60 && counted < tokens; tries++) {
      counted = Number((await must('Reading meter usage', () => meterUsage(meters.tokens, s.customer, window))).value);
      if (counted < tokens) await sleep(500);
    }
    if (counted < tokens) throw new Error(`the Tokens meter counts ${counted} of the ${tokens} tokens sent`);
    say(`   ✓ ${grouped(PAYG_EVENTS)} requests of ${grouped(tokens)} tokens in the last minute: ${usd(Math.round(tokens * Number(PAYG_PER_TOKEN) * 100))} of usage, over the threshold`);
    // The usage notices check thresholds within seconds; the period job does too.
    let threshold;
    for (let tries = 0; tries < 40 && !threshold; tries++) {
      if (tries % 4 === 3) await must('Running the period job', () => billstream.POST('/v1/cron/bill-subscriptions', { body: {} }));
      const list = await must('Listing invoices', () => billstream.GET('/v1/invoices', { params: { query: { subscription_id: s.subscription.id } } }));
      threshold = list.items.find((i) => i.billing_reason === 'SUBSCRIPTION_THRESHOLD');
      if (!threshold) await sleep(500);
    }
    if (!threshold) throw new Error('no threshold invoice appeared');
    say(`   ✓ ${threshold.id} (SUBSCRIPTION_THRESHOLD, ${threshold.status}), ${day(threshold.period_start)} → now, before the period ends on ${day(s.subscription.current_period_end)}:`);
    printLines(threshold);
    s.invoice = threshold;
    return true;
  });

  step(n + 1, 'Paid by card: a PROVIDER payment, pending until the processor says so');
  const paid =
    made &&
    (await part(async () => {
      s.invoice = await finalize(s.invoice);
      say(`   ✓ ${s.invoice.invoice_number}: finalized, ${usd(s.invoice.amount_due)} due by ${day(s.invoice.due_date)}`);
      const body = { invoice_id: s.invoice.id, amount: s.invoice.amount_remaining, payment_method_type: 'PROVIDER', provider: 'stripe', idempotency_key: `demo-card-${RUN}` };
      const pending = await must('Starting the card payment', () => billstream.POST('/v1/payments', { body }));
      say(`   ✓ ${pending.id}  ${usd(pending.amount)} PROVIDER (stripe), ${pending.payment_status}: payment.pending tells the processor integration to charge`);
      const settled = await must('Settling the card payment', () =>
        billstream.POST('/v1/payments/{id}/succeed', { ...byId(pending.id), body: { provider_reference: `pi_demo_${RUN.replace(/-/g, '')}` } }),
      );
      say(`   ✓ the processor's webhook → POST /v1/payments/${settled.id}/succeed: ${settled.payment_status} (${settled.provider_reference})`);
      s.invoice = await must('Reading the invoice', () => billstream.GET('/v1/invoices/{id}', byId(s.invoice.id)));
      say(`   ✓ ${s.invoice.invoice_number}: ${s.invoice.status}, paid ${usd(s.invoice.amount_paid)}, remaining ${usd(s.invoice.amount_remaining)}`);
      return s.invoice.status === 'paid';
    }));

  step(n + 2, 'The invoice as a document');
  if (!paid) say(`   ! skipped: it shows the invoice of step ${n + 1}`);
  else
    await part(async () => {
      const pdf = await documentBytes(`/v1/invoices/${s.invoice.id}/pdf`);
      const file = path.join(require('node:os').tmpdir(), `billstream-${s.invoice.invoice_number}.pdf`);
      fs.writeFileSync(file, pdf.bytes);
      say(`   ✓ PDF of ${s.invoice.invoice_number} (${grouped(pdf.bytes.length)} bytes, ${pdf.type}) written to ${file}`);
      const again = await documentBytes(`/v1/invoices/${s.invoice.id}/pdf`);
      say(`   ✓ the same bytes on every request (frozen at finalization): ${again.bytes.equals(pdf.bytes) ? 'identical' : 'DIFFERENT'}`);
      if (s.invoice.hosted_invoice_url) say(`   ✓ a link for the customer, no API key needed: ${s.invoice.hosted_invoice_url}`);
    });
}

// ---------------------------------------------------------------- taxes: German VAT, the EU reverse charge, the tax report

/**
 * Steps n..n+2: a seller in Germany turns taxes on with the EU reverse charge; a 19 % VAT rate;
 * a German customer, taxed at it, and a French business with a VAT id, reverse charged (no VAT
 * on the invoice, the buyer accounts for it); each invoiced; then the tax report of those
 * invoices and its CSV export. Every figure is checked against one computed here from the rate:
 * a mismatch is printed ✗ and makes the demo exit 1.
 */
const SELLER_COUNTRY = 'DE';
const VAT_PERCENT = '19';
const TAXED_FEE = '100';
const TAXED_CURRENCY = 'eur';
const TAXED_CUSTOMERS = [
  { key: 'berlin', name: 'Berliner Software GmbH', email: 'buchhaltung@berliner.example', address: { address_line1: 'Friedrichstraße 1', address_city: 'Berlin', address_postal_code: '10117', address_country: 'DE' } },
  {
    key: 'lyon',
    name: 'Société Lyonnaise SAS',
    email: 'compta@lyonnaise.example',
    address: { address_line1: '1 place Bellecour', address_city: 'Lyon', address_postal_code: '69002', address_country: 'FR' },
    // A VAT number whose check digits are right (the customer service checks them, ADR 0066).
    tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }],
  },
];

/** Figures that did not match the ones computed from the prices and rates. */
let failedChecks = 0;
function check(ok, text) {
  if (!ok) failedChecks++;
  say(`     ${ok ? '✓' : '✗'} ${text}`);
}

/** Minor units of a currency of 2 decimals as "EUR 1,190.00" (exact: integers only). */
function inCurrency(minor, currency) {
  const m = BigInt(minor);
  const abs = m < 0n ? -m : m;
  return `${m < 0n ? '-' : ''}${currency.toUpperCase()} ${grouped(abs / 100n)}.${String(abs % 100n).padStart(2, '0')}`;
}

/** The tax of `minor` at a percentage of at most 4 decimals, rounded half up once (docs/api/taxes.md#arithmetic). */
function taxOf(minor, percent) {
  const [int, frac = ''] = percent.split('.');
  const scaled = BigInt(minor) * BigInt(int + frac.padEnd(4, '0'));
  return Number((scaled + 500_000n) / 1_000_000n);
}

async function taxStory(n) {
  const s = { from: new Date(Date.now() - 1000).toISOString(), invoices: [] };
  step(n, `Taxes: a seller in ${SELLER_COUNTRY}, ${VAT_PERCENT} % VAT at home, the EU reverse charge abroad`);
  const made = await part(async () => {
    const current = await must('Reading the settings', () => billstream.GET('/v1/settings/billing'));
    const seller = current.invoice_settings ? {} : { company_name: 'Billstream Demo GmbH', address: 'Hafenstraße 1, 20457 Hamburg' };
    const body = { tax: { enabled: true, reverse_charge: { enabled: true, seller_country: SELLER_COUNTRY } }, invoice_settings: { ...seller, country: SELLER_COUNTRY, tax_id: 'DE136695976' } };
    const settings = await must('Turning taxes on', () => billstream.PUT('/v1/settings/billing', { body }));
    say(`   ✓ taxes on (rounding ${settings.tax.rounding}, prices ${settings.tax.default_behavior} of tax), reverse charge for EU businesses outside ${settings.tax.reverse_charge.seller_country}`);
    s.rate = await must('Creating the tax rate', () =>
      billstream.POST('/v1/tax_rates', { body: { code: `DE_VAT_${VAT_PERCENT}_${RUN}`, name: 'Umsatzsteuer', percentage: VAT_PERCENT, tax_type: 'VAT', country: SELLER_COUNTRY } }),
    );
    say(`   ✓ ${s.rate.id}  ${s.rate.code}: ${s.rate.percentage} % ${s.rate.tax_type}, ${s.rate.country}`);
    // The price names its rate, so another run's rates of the same country never add to it.
    const price = { type: 'FIXED', currency: TAXED_CURRENCY, amount: TAXED_FEE, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', display_name: 'Business plan', tax_rate_ids: [s.rate.id] };
    s.plan = await must('Creating the plan', () => billstream.POST('/v1/plans', { body: { name: `Demo Business ${RUN}`, prices: [price] } }));
    say(`   ✓ ${s.plan.id}  Business: ${TAXED_FEE} ${TAXED_CURRENCY} a month in advance, bearing ${s.rate.code}`);
    for (const c of TAXED_CUSTOMERS) {
      const customer = await must('Creating customers', () =>
        billstream.POST('/v1/customers', { body: { external_customer_id: `${c.key}-${RUN}`, name: c.name, email: c.email, ...c.address, ...(c.tax_ids ? { tax_ids: c.tax_ids } : {}) } }),
      );
      say(`   ✓ ${customer.id}  ${c.name}, ${c.address.address_city} (${c.address.address_country})${c.tax_ids ? `, VAT id ${c.tax_ids[0].value}` : ''}`);
      const sub = await must('Subscribing', () => billstream.POST('/v1/subscriptions', { body: { customer_id: customer.id, plan_id: s.plan.id, payment_terms_days: PAYMENT_TERMS_DAYS } }));
      const list = await must('Listing invoices', () => billstream.GET('/v1/invoices', { params: { query: { subscription_id: sub.id } } }));
      const first = list.items[0];
      if (!first) throw new Error(`${c.name}'s subscription made no invoice`);
      s.invoices.push({ c, invoice: first.status === 'draft' ? await finalize(first) : first });
    }
    return true;
  });

  step(n + 1, 'The taxed invoices');
  if (!made) say(`   ! skipped: it needs the invoices of step ${n}`);
  else
    await part(async () => {
      const fee = Number(TAXED_FEE) * 100;
      for (const { c, invoice: inv } of s.invoices) {
        const domestic = c.address.address_country === SELLER_COUNTRY;
        const tax = domestic ? taxOf(fee, VAT_PERCENT) : 0;
        say(`\n   ${bold(inv.invoice_number ?? inv.id)}  ${c.name}  ${inv.status}${inv.reverse_charge ? ', reverse charge' : ''}`);
        const rows = [['subtotal', inCurrency(inv.subtotal, inv.currency)]];
        for (const b of inv.tax_breakdown) rows.push([`${b.code} ${b.percentage} % of ${inCurrency(b.taxable_amount, inv.currency)}`, inCurrency(b.amount, inv.currency)]);
        if (inv.reverse_charge) rows.push(['VAT: reverse charge, the buyer accounts for it', inCurrency(0, inv.currency)]);
        rows.push(['total', inCurrency(inv.total, inv.currency)]);
        table(rows, { indent: '     ' });
        check(inv.subtotal === fee, `subtotal ${inCurrency(inv.subtotal, inv.currency)} = the ${TAXED_FEE} ${TAXED_CURRENCY} fee`);
        if (domestic) check(inv.total_tax === tax && !inv.reverse_charge, `VAT ${inCurrency(inv.total_tax, inv.currency)} = ${VAT_PERCENT} % of ${inCurrency(fee, inv.currency)}, half up`);
        else check(inv.reverse_charge && inv.total_tax === 0 && inv.tax_breakdown.length === 0, `no VAT: an EU business outside ${SELLER_COUNTRY} with a VAT id, reverse charged`);
        check(inv.total === fee + tax, `total ${inCurrency(inv.total, inv.currency)} = ${inCurrency(fee, inv.currency)} + ${inCurrency(tax, inv.currency)}`);
      }
    });

  step(n + 2, 'The tax report: what to declare, and its CSV');
  if (!made) say(`   ! skipped: it needs the invoices of step ${n}`);
  else
    await part(async () => {
      const to = new Date(Date.now() + 60_000).toISOString();
      const query = { from: s.from, to, currency: TAXED_CURRENCY };
      const report = await must('Reading the tax report', () => billstream.GET('/v1/reports/taxes', { params: { query } }));
      say(`   ✓ GET /v1/reports/taxes?from=${s.from}&to=${to}&currency=${TAXED_CURRENCY}:`);
      const rows = [['treatment', 'rate', 'invoiced', 'tax', 'credited', 'tax credited', 'net taxable', 'net tax']];
      for (const r of report.rows) {
        const money = ['invoiced_taxable', 'invoiced_tax', 'credited_taxable', 'credited_tax', 'net_taxable', 'net_tax'].map((k) => inCurrency(r[k], r.currency));
        rows.push([r.treatment, r.code ? `${r.code} (${r.percentage} %)` : '-', ...money]);
      }
      table(rows, { indent: '     ', left: 2 });
      // Expected: the domestic invoices at the rate, the reverse-charged ones as an untaxed figure.
      const fee = Number(TAXED_FEE) * 100;
      const domestic = TAXED_CUSTOMERS.filter((c) => c.address.address_country === SELLER_COUNTRY).length;
      const reverse = TAXED_CUSTOMERS.length - domestic;
      const taxed = report.rows.find((r) => r.tax_rate_id === s.rate.id);
      const rc = report.rows.find((r) => r.treatment === 'reverse_charge');
      check(taxed?.net_taxable === domestic * fee && taxed?.net_tax === domestic * taxOf(fee, VAT_PERCENT), `${VAT_PERCENT} %: ${inCurrency(domestic * fee, TAXED_CURRENCY)} taxable, ${inCurrency(domestic * taxOf(fee, VAT_PERCENT), TAXED_CURRENCY)} VAT`);
      check(rc?.net_taxable === reverse * fee && rc?.net_tax === 0, `reverse charge: ${inCurrency(reverse * fee, TAXED_CURRENCY)} billed without VAT`);
      const total = report.totals.find((t) => t.currency === TAXED_CURRENCY);
      check(total?.net_tax === s.invoices.reduce((sum, x) => sum + x.invoice.total_tax, 0), `total VAT ${inCurrency(total?.net_tax ?? 0, TAXED_CURRENCY)} = the invoices' total_tax`);

      const created = await must('Exporting the tax report', () =>
        billstream.POST('/v1/tasks', { body: { task_type: 'EXPORT', entity_type: 'TAX_REPORT', file_type: 'CSV', filters: { start_time: s.from, end_time: to, currency: TAXED_CURRENCY } } }),
      );
      let task = created;
      for (let tries = 0; tries < 60 && !['COMPLETED', 'FAILED', 'CANCELLED'].includes(task.task_status); tries++) {
        await sleep(250);
        task = await must('Reading the task', () => billstream.GET('/v1/tasks/{id}', byId(created.id)));
      }
      if (task.task_status !== 'COMPLETED') throw new Error(`the TAX_REPORT export is ${task.task_status}`);
      const csv = await documentBytes(`/v1/tasks/${task.id}/download`);
      const file = path.join(require('node:os').tmpdir(), `billstream-tax-report-${RUN}.csv`);
      fs.writeFileSync(file, csv.bytes);
      const lines = csv.bytes.toString().trim().split('\n');
      say(`   ✓ ${task.id}  TAX_REPORT export: ${task.total_records} rows written to ${file}`);
      check(lines.length === report.rows.length + 1, `the CSV has its header and one line per row of the report (${lines.length - 1})`);
    });
}

async function main() {
  say(bold('Billstream demo'));
  say(dim(`   stack ${BASE_URL}, run ${RUN}`));
  const period = lastMonth(Date.now());
  const window = { start_time: new Date(period.start).toISOString(), end_time: new Date(period.end).toISOString() };

  step(1, 'Checking the stack');
  await must('Checking the stack', () => billstream.GET('/readyz')).catch((err) => {
    throw err instanceof DemoStop ? err : new DemoStop(`The gateway at ${BASE_URL} is not ready: ${err.message}`);
  });
  await must('Checking the API key', () => billstream.GET('/v1/api-keys'));
  say('   ✓ gateway ready, API key accepted');

  step(2, 'Webhook endpoint');
  const receiver = await startReceiver();
  const endpoint = await part(async () => {
    const body = { url: receiver.url, events: ['*'], description: `Billstream demo ${RUN}` };
    let created;
    try {
      created = await billstream.POST('/v1/webhook-endpoints', { body });
    } catch (err) {
      if (!(err instanceof BillstreamError && err.status === 400)) return must('Creating the webhook endpoint', () => Promise.reject(err));
      say(`   ! The stack refused the local receiver ${receiver.url}:`);
      say(`     "${err.message}"`);
      say('     Webhooks reach a plain-http loopback receiver only when the stack runs with WEBHOOK_ALLOW_INSECURE=true,');
      say('     e.g. `WEBHOOK_ALLOW_INSECURE=true npm start`. Going on without webhooks.');
      return undefined;
    }
    receiver.setSecret(created.secret);
    say(`   ✓ ${created.id} -> ${receiver.url} (all events, secret ${created.secret.slice(0, 10)}…)`);
    return created;
  });

  try {
    step(3, 'Customers');
    const customers = CUSTOMERS.map((c) => ({ ...c, externalId: `${c.key}-${RUN}` }));
    const haveCustomers = await part(async () => {
      for (const c of customers) {
        const body = { external_customer_id: c.externalId, name: c.name, email: c.email, metadata: { source: 'demo' } };
        c.id = (await must('Creating customers', () => billstream.POST('/v1/customers', { body }))).id;
        say(`   ✓ ${c.id}  ${c.name} (${c.externalId})`);
      }
      return true;
    });

    step(4, 'Wallets with prepaid credits');
    if (!haveCustomers) say('   ! skipped: wallets need the customers of step 3');
    else
      await part(async () => {
        for (const c of customers) {
          const body = {
            customer_id: c.id,
            currency: 'usd',
            initial_credits_to_load: c.credits,
            description: 'Demo prepaid credits',
            alert_settings: { alert_enabled: true, warning: { threshold: '250' }, critical: { threshold: '100' } },
          };
          c.wallet = await must('Creating wallets', () => billstream.POST('/v1/wallets', { body }));
          const pays = c.wallet.config?.allowed_price_types?.join(', ') ?? 'USAGE';
          say(`   ✓ ${c.wallet.id}  ${c.name}: ${c.wallet.credit_balance} credits, pays ${pays} lines of invoices (alerts below 250 and 100)`);
        }
      });

    step(5, 'Meters and a plan');
    const meters = await part(async () => {
      const meter = (body) => must('Creating meters', () => billstream.POST('/v1/meters', { body }));
      const requests = await meter({ name: `API requests ${RUN}`, event_name: 'api_request', aggregation: { type: 'COUNT' } });
      const tokens = await meter({ name: `Tokens ${RUN}`, event_name: 'api_request', aggregation: { type: 'SUM', field: 'tokens' } });
      say(`   ✓ ${requests.id}  API requests (COUNT of api_request)`);
      say(`   ✓ ${tokens.id}  Tokens (SUM of properties.tokens)`);
      return { requests, tokens };
    });
    const plan =
      meters &&
      (await part(async () => {
        const created = await createPlan(meters.tokens);
        say(`   ✓ ${created.id}  ${created.name}, billed monthly in arrear:`);
        for (const p of created.prices) {
          say(`       ${p.id}  ${p.type.padEnd(5)}  ${p.display_name}: ${p.amount} usd ${p.type === 'USAGE' ? 'per token of the Tokens meter' : 'per month'}`);
        }
        return created;
      }));

    step(6, `Sending ${period.name}'s usage: ${grouped(EVENT_COUNT)} events in bulk (${BATCH_SIZE} per request)`);
    const events = usageStream(customers, EVENT_COUNT, period);
    const seconds = await part(() => sendUsage(events));
    if (seconds !== undefined) say(`   ✓ ${grouped(EVENT_COUNT)} events from ${day(window.start_time)} to ${day(window.end_time)} accepted in ${seconds.toFixed(1)} s (202: durably queued)`);

    if (meters && seconds !== undefined) {
      step(7, 'Waiting for the aggregator');
      const counted = await part(() => waitForUsage(meters, customers, window, EVENT_COUNT));
      if (counted !== undefined) say(`${tty ? '\r' : ''}   ✓ ${grouped(counted)} events aggregated through the meters            `);
      await part(async () => {
        for (const c of customers) {
          c.requests = (await must('Reading meter usage', () => meterUsage(meters.requests, c, window))).value;
          c.tokens = (await must('Reading meter usage', () => meterUsage(meters.tokens, c, window))).value;
        }
      });
    }

    // Subscribing after the usage is stored: a subscription that starts in the past is invoiced
    // at creation for every period that has ended, with the usage the aggregator holds then.
    if (haveCustomers && plan && customers.every((c) => c.tokens !== undefined)) {
      step(8, `Subscriptions from ${day(window.start_time)}: ${period.name} has ended, so creating them invoices it`);
      await part(async () => {
        for (const c of customers) {
          const body = {
            customer_id: c.id,
            plan_id: plan.id,
            start_date: window.start_time,
            billing_cycle: 'calendar',
            payment_terms_days: PAYMENT_TERMS_DAYS,
            metadata: { source: 'demo' },
          };
          c.subscription = await must('Creating subscriptions', () => billstream.POST('/v1/subscriptions', { body }));
          const s = c.subscription;
          say(`   ✓ ${s.id}  ${c.name}: ${s.status}, now in ${day(s.current_period_start)} → ${day(s.current_period_end)}`);
        }
      });
    }

    const subscribed = customers.filter((c) => c.subscription);
    if (subscribed.length > 0) {
      step(9, `Invoices for ${period.name}`);
      await part(async () => {
        const run = await must('Running the period job', () => billstream.POST('/v1/cron/bill-subscriptions', { body: {} }));
        say(`   ✓ POST /v1/cron/bill-subscriptions: ${run.invoices_finalized ?? 0} drafts finalized by this run, credits applied from the PRE_PAID wallets`);
        for (const c of subscribed) {
          c.invoice = await finalizedInvoice(c.subscription.id, period.start);
          await printInvoice(c);
        }
      });

      step(10, 'An offline payment');
      await part(async () => {
        const c = subscribed.find((x) => x.invoice && x.invoice.amount_remaining > 0);
        if (!c) {
          say('   - nothing to pay: the credits paid every invoice');
          return;
        }
        const body = {
          invoice_id: c.invoice.id,
          amount: c.invoice.amount_remaining,
          payment_method_type: 'OFFLINE',
          reference: `bank transfer for ${c.invoice.invoice_number}`,
          idempotency_key: `demo-payment-${RUN}`,
        };
        const payment = await must('Recording the payment', () => billstream.POST('/v1/payments', { body }));
        say(`   ✓ ${payment.id}  ${c.name}: ${usd(payment.amount)} ${payment.payment_method_type} ("${payment.reference}"), ${payment.payment_status}`);
        c.invoice = await must('Reading invoices', () => billstream.GET('/v1/invoices/{id}', byId(c.invoice.id)));
        const inv = c.invoice;
        say(`   ✓ ${inv.invoice_number}: ${inv.status}, payment ${inv.payment_status}, paid ${usd(inv.amount_paid)}, remaining ${usd(inv.amount_remaining)}`);
      });
    }

    step(11, 'Balances, usage and invoices');
    await part(async () => {
      const rows = [['customer', 'requests', 'tokens', 'invoiced', 'credits', 'due', 'invoice', 'credit balance', 'alert']];
      for (const c of customers) {
        let balance = '-';
        let alert = '-';
        if (c.wallet) {
          balance = (await must('Reading balances', () => billstream.GET('/v1/wallets/{id}/balance', byId(c.wallet.id)))).credit_balance;
          alert = (await must('Reading wallets', () => billstream.GET('/v1/wallets/{id}', byId(c.wallet.id)))).alert_state;
        }
        const inv = c.invoice;
        rows.push([
          c.name,
          grouped(c.requests ?? '-'),
          grouped(c.tokens ?? '-'),
          inv ? usd(inv.subtotal) : '-',
          inv ? usd(inv.total_prepaid_credits_applied) : '-',
          inv ? usd(inv.amount_remaining) : '-',
          inv ? inv.status : '-',
          balance,
          alert,
        ]);
      }
      table(rows);
    });

    if (meters) await midMonthStory(12, meters);
    else {
      step(12, 'This month: an upgrade, a coupon, a credit grant and a credit note');
      say('   ! skipped: it needs the meters of step 5');
    }

    if (meters) await collectionStory(17, meters);
    else {
      step(17, 'Progressive billing, a card payment and the PDF');
      say('   ! skipped: it needs the meters of step 5');
    }

    await taxStory(20);

    step(23, 'Webhooks received');
    if (!endpoint) {
      say('   - none: no webhook endpoint (see step 2)');
    } else {
      let last = -1;
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && receiver.received.size !== last) {
        last = receiver.received.size;
        await sleep(2500);
      }
      const byName = new Map();
      for (const envelope of receiver.received.values()) {
        const name = envelope.event_name ?? envelope.type;
        byName.set(name, (byName.get(name) ?? 0) + 1);
      }
      say(`   ✓ ${receiver.received.size} distinct events, every signature valid${receiver.badSignatures() ? ` (${receiver.badSignatures()} bad signatures refused)` : ''}`);
      for (const [name, count] of [...byName].sort()) say(`     ${String(count).padStart(4)}  ${name}`);
    }
  } finally {
    if (endpoint) await billstream.DELETE('/v1/webhook-endpoints/{id}', byId(endpoint.id));
    await receiver.close();
  }
  if (failedChecks > 0) throw new DemoStop(`${failedChecks} figure(s) did not match the ones computed from the prices and rates (✗ above).`);
  say(`\n${bold('Done.')} Explore: ${BASE_URL}/v1/openapi.json, docs/api.md, docs/operations.md`);
}

(async () => {
  try {
    billstream = createClient({
      apiKey: apiKey(),
      baseUrl: BASE_URL,
      events: {
        maxBatchSize: BATCH_SIZE,
        onError: (err, info) => {
          if (!info.willRetry) refusedEvents.push(`${info.events.length} event(s): ${err.status} ${err.message}`);
        },
      },
    });
    await main();
    await billstream.close();
  } catch (err) {
    if (err instanceof DemoStop) {
      say(`\n✗ ${err.message}`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
})();
