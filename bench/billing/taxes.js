/**
 * The `close-taxes` scenario of invoices.js (issue #49, its speed goal): the same close as
 * `close` (same customers, usage, period and plan) with taxes on. invoices.js does the set-up,
 * the runs and the report's frame; this file holds what only the scenario needs.
 *
 * Taxes, set on the run's own copy of the set-up through the gateway, on a stack of that copy
 *   whose period job is off (BILLING_INTERVAL_MS=0), stopped before the timed close starts on
 *   fresh processes (the plain copy gets the same start and stop of a stack, changing nothing):
 *   - `PUT /v1/settings/billing {tax: {enabled: true, provider: BUILT_IN, rounding: LINE,
 *     default_behavior: exclusive}}` (invoice_settings left as the plain close has them);
 *   - one rate, `POST /v1/tax_rates {code: DE_VAT_19, percentage: 19, tax_type: VAT, country: DE}`;
 *   - the plan names it (`PUT /v1/plans/{id} {tax_rate_ids: [rate]}`), so every positive line of
 *     every cycle invoice bears it (rule 4 of "which rates a line bears").
 *   One rate only: the plan's rates come before the customer's and the address's, so a second
 *   rate on some customers would need a second plan, i.e. other subscriptions than the plain
 *   close's.
 * Checked at the end (verifyTaxes): every cycle invoice finalized, tax_status ok, 3 lines,
 *   the subtotal of the plain close; per positive line one tax of the rate, its amount
 *   round-half-up(net × 19 / 100) computed here from the row; total_tax = Σ line tax = that Σ =
 *   Σ tax_breakdown; the wallet pays the usage lines' net with their tax, up to its 500 cents;
 *   total = subtotal + tax − credits applied = amount_due; one INVOICE_CREDIT_APPLIED debit per
 *   wallet invoice, of the credits applied.
 */

const { REAL_INVOICES, perProcess } = require('./features');

const TAX_PERCENT = 19;
const RATE_CODE = 'DE_VAT_19';

/** Round half up of net × 19 / 100, exactly (integers). */
const taxOf = (net) => (net > 0 ? Number((BigInt(net) * BigInt(TAX_PERCENT) * 2n + 100n) / 200n) : 0);

/** Turns taxes on for the set-up's plan on a stack of the copy (its period job off); answers the rate's id. */
async function configureTaxes(api, setup) {
  // Only `tax`: the seller's invoice_settings stay as in the plain close (they go into every
  // finalized invoice's document snapshot, which is not the tax's cost).
  await api.must('PUT', '/v1/settings/billing', { tax: { enabled: true, provider: 'BUILT_IN', rounding: 'LINE', default_behavior: 'exclusive' } }, 200);
  const rate = await api.must('POST', '/v1/tax_rates', { code: RATE_CODE, name: 'VAT 19 %', percentage: String(TAX_PERCENT), tax_type: 'VAT', country: 'DE' }, 201);
  const plan = await api.must('PUT', `/v1/plans/${setup.planId}`, { tax_rate_ids: [rate.id] }, 200);
  if (JSON.stringify(plan.tax_rate_ids) !== JSON.stringify([rate.id])) throw new Error(`plan answered tax_rate_ids ${JSON.stringify(plan.tax_rate_ids)}`);
  return rate.id;
}

/** Correctness of a taxed close (see the header). */
async function verifyTaxes(pg, setup, { subtotalOf, walletCents, rateId, subscriptions }) {
  const index = new Map(setup.customers.map((c, i) => [c, i]));
  const { rows } = await pg.query(
    `SELECT i.id, i.customer_id, i.status, i.tax_status, i.invoice_number, i.subtotal, i.total_discount, i.total_tax, i.tax_breakdown,
            i.total_prepaid_credits_applied AS applied, i.total, i.amount_due,
            (SELECT json_agg(json_build_object('price_type', l.price_type, 'amount', l.amount, 'net', l.net_amount, 'tax', l.tax_amount, 'taxes', l.taxes,
                                               'behavior', l.tax_behavior, 'credits', l.prepaid_credits_applied) ORDER BY l.position)
             FROM billing.invoice_line_items l WHERE l.invoice_id = i.id) AS lines
     FROM billing.invoices i WHERE billing_reason = 'SUBSCRIPTION_CYCLE' AND ${REAL_INVOICES}`,
  );
  const problems = [];
  const numbers = new Set();
  const sums = { subtotal: 0, tax: 0, applied: 0, credited: 0, taxed_lines: 0 };
  for (const r of rows) {
    const i = index.get(r.customer_id);
    if (i === undefined) {
      problems.push(`${r.id} is not a set-up customer's`);
      continue;
    }
    const subtotal = subtotalOf(setup.expected[i]);
    const lines = r.lines ?? [];
    if (!['finalized', 'paid'].includes(r.status) || r.tax_status !== 'ok') problems.push(`${r.id} ${r.status} tax_status ${r.tax_status}`);
    if (lines.length !== 3) problems.push(`${r.id} has ${lines.length} lines`);
    if (Number(r.subtotal) !== subtotal) problems.push(`${r.id} subtotal ${r.subtotal}, expected ${subtotal}`);
    if (Number(r.total_discount) !== 0) problems.push(`${r.id} total_discount ${r.total_discount}`);
    let lineTax = 0;
    let expectedTax = 0;
    let usageOwed = 0;
    for (const l of lines) {
      const net = Number(l.net);
      const want = taxOf(net);
      const taxes = l.taxes ?? [];
      expectedTax += want;
      lineTax += Number(l.tax);
      if (Number(l.tax) !== want) problems.push(`${r.id} line of net ${net}: tax ${l.tax}, expected ${want}`);
      if (net > 0) {
        sums.taxed_lines += 1;
        const t = taxes[0];
        if (taxes.length !== 1 || t.tax_rate_id !== rateId || String(t.percentage) !== String(TAX_PERCENT) || Number(t.amount) !== want || Number(t.taxable_amount) !== net) {
          problems.push(`${r.id} line taxes ${JSON.stringify(taxes)}, expected one ${RATE_CODE} of ${want} on ${net}`);
        }
        if (l.behavior !== 'exclusive') problems.push(`${r.id} line tax_behavior ${l.behavior}`);
      } else if (taxes.length !== 0) problems.push(`${r.id} line of net ${net} bears ${JSON.stringify(taxes)}`);
      // The wallet (allowed_price_types USAGE) pays a usage line's net with its exclusive tax.
      if (l.price_type === 'USAGE') usageOwed += net + want;
    }
    const breakdown = (r.tax_breakdown ?? []).reduce((a, b) => a + Number(b.amount), 0);
    if (Number(r.total_tax) !== lineTax || lineTax !== expectedTax || breakdown !== expectedTax) {
      problems.push(`${r.id} total_tax ${r.total_tax}, lines ${lineTax}, breakdown ${breakdown}, expected ${expectedTax}`);
    }
    const applied = Math.min(i % 2 === 0 ? walletCents : 0, usageOwed);
    const linesApplied = lines.reduce((a, l) => a + Number(l.credits ?? 0), 0);
    if (Number(r.applied) !== applied || linesApplied !== applied) problems.push(`${r.id} credits applied ${r.applied} (lines ${linesApplied}), expected ${applied}`);
    const total = subtotal + expectedTax - applied;
    if (Number(r.total) !== total || Number(r.amount_due) !== total) problems.push(`${r.id} total ${r.total} amount_due ${r.amount_due}, expected ${total}`);
    numbers.add(Number(String(r.invoice_number).split('-')[2]));
    sums.subtotal += subtotal;
    sums.tax += Number(r.total_tax);
    sums.applied += Number(r.applied);
    if (Number(r.applied) > 0) sums.credited += 1;
  }
  if (rows.length !== subscriptions) problems.push(`${rows.length} cycle invoices, expected ${subscriptions}`);
  const gapFree = numbers.size === rows.length && Math.min(...numbers) === 1 && Math.max(...numbers) === rows.length;
  if (!gapFree) problems.push('invoice numbers are not 1..n');
  const { rows: debits } = await pg.query(
    "SELECT count(*)::int AS n, coalesce(sum(credit_amount), 0)::numeric AS credits FROM wallet.transactions WHERE transaction_reason = 'INVOICE_CREDIT_APPLIED'",
  );
  const wallets = setup.customers.filter((_, i) => i % 2 === 0).length;
  if (debits[0].n !== wallets) problems.push(`${debits[0].n} INVOICE_CREDIT_APPLIED debits, expected ${wallets}`);
  // Credits are whole units of 100 cents here (the wallet's currency is usd).
  if (Math.round(Number(debits[0].credits) * 100) !== sums.applied) problems.push(`wallet debited ${debits[0].credits} credits, invoices applied ${sums.applied} cents`);
  return {
    cycle_invoices: rows.length,
    finalized: rows.filter((r) => ['finalized', 'paid'].includes(r.status)).length,
    numbers_gap_free: gapFree,
    taxed_lines: sums.taxed_lines,
    total_tax_cents: sums.tax,
    credited_invoices: sums.credited,
    credits_applied_cents: sums.applied,
    subtotal_sum_cents: sums.subtotal,
    wallet_debits: debits[0].n,
    ok: problems.length === 0,
    problems: problems.slice(0, 10),
  };
}

/** CPU ms per invoice of all the run's processes but the bench's client. */
const cpuOf = (r) => r.cpu_ms_per_invoice_sums.total;
/** taxed / plain CPU per invoice, two decimals (NaN when the run has no plain close). */
const cpuRatio = (plain, taxed) => (plain ? Math.round((cpuOf(taxed) / cpuOf(plain)) * 100) / 100 : NaN);
/** The same ratio in the units of each close's own ceilings (the proxied floor's requests). */
const ceilingRatio = (plain, taxed) =>
  plain?.vs_ceilings && taxed.vs_ceilings ? Math.round((taxed.vs_ceilings.total_in_floor_requests / plain.vs_ceilings.total_in_floor_requests) * 100) / 100 : NaN;

/** The README lines of the taxed closes, with the ratio to the plain close of the same run. */
function report(closes, taxCloses, { subscriptions, events, ceilingsOf, inCeilings }) {
  const ratios = taxCloses.map((t, i) => cpuRatio(closes[i], t));
  const worst = Math.max(...ratios);
  const failed = taxCloses.some((t) => !t.check.ok);
  const checkOf = (c) =>
    c.ok
      ? `ok: ${c.cycle_invoices} finalized, numbers 1..n, ${c.taxed_lines} lines taxed, total_tax ${c.total_tax_cents} cents = Σ round(net × 19 %), ${c.credited_invoices} credited (${c.credits_applied_cents} cents, lines with their tax)`
      : `FAILED ${c.problems.join('; ')}`;
  return [
    `**Closing a period with taxes** (issue #49: the same ${subscriptions.toLocaleString('en')} subscriptions and ${events.toLocaleString('en')} events, taxes on with the built-in provider, LINE rounding, one ${TAX_PERCENT} % rate named by the plan on every positive line), each on its own copy and fresh processes in the same run as the plain close: worst CPU per invoice taxed / plain **${worst}** (goal <= 1.15: ${failed ? 'FAILED checks' : worst <= 1.15 ? 'met' : 'MISSED'}).`,
    '',
    '| run | order | plain | taxed | CPU ms per invoice, taxed (plain) | taxed / plain CPU | in ceilings' + "' units" + ' | ceilings, taxed (plain) | taxed close in ceilings | checks |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...taxCloses.map((r, i) => {
      const p = closes[i];
      const per = Object.entries(r.cpu_ms_per_invoice)
        .filter(([k]) => k !== 'client')
        .map(([k, v]) => `${k} ${v} (${p?.cpu_ms_per_invoice[k] ?? '-'})`)
        .join(', ');
      return `| ${i + 1} | ${r.order} | ${p?.seconds ?? '-'} s | ${r.seconds} s | ${per}; **${cpuOf(r)}** (${p ? cpuOf(p) : '-'}) | **${ratios[i]}** | ${ceilingRatio(p, r)} | ${ceilingsOf(r)} (${p ? ceilingsOf(p) : '-'}) | ${inCeilings(r)} | ${checkOf(r.check)} |`;
    }),
  ];
}

module.exports = { configureTaxes, verifyTaxes, report, cpuRatio, ceilingRatio, perProcess, TAX_PERCENT };
