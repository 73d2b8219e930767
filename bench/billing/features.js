/**
 * The `close-features` scenario of invoices.js (issue #31): the same close with coupons, credit
 * grants and minimum commitments. invoices.js does the set-up, the runs and the report; this
 * file holds what only the scenario needs.
 *
 * set-up: a second plan "Bench features" with the same three prices, and a second subscription
 *   of every customer on it (same start, same period), so both sets bill the same usage:
 *   - a coupon PERCENTAGE 10 % FOREVER on every second one (customer index i % 2 = 0, the
 *     customers with a wallet), attached at create (`discounts: [{coupon_id}]`);
 *   - a RECURRING credit grant of GRANT_CREDITS credits on every fourth (i % 4 = 0), made after
 *     the subscription (`POST /v1/credit_grants`): its first period is credited at once;
 *   - a minimum commitment of COMMITMENT cents on every tenth (i % 10 = 0), above any subtotal
 *     here ($10 + at most 600 cents of usage), so each gets a COMMITMENT_TRUE_UP line.
 * Each run copies the set-up twice: one copy closes the plain set, the other the feature set,
 *   each on fresh processes; `shiftSets` moves the set to close so that its period ended a
 *   second ago and the other set one day ahead (its grant cursors with it, so nothing of it is
 *   due during the close).
 */

/** The invoices a close made (not those the bench seeded: earlier periods, the list's). */
const REAL_INVOICES = "id NOT LIKE 'inv_seed%' AND id NOT LIKE 'inv_hist%'";
const COUPON_PERCENT = 10;
const GRANT_CREDITS = 10; // 1000 cents: with the wallet's 500, more than any invoice's usage
const COMMITMENT = 2000; // cents
const DAY_MS = 86_400_000;

const hasCoupon = (i) => i % 2 === 0;
const hasGrant = (i) => i % 4 === 0;
const hasCommitment = (i) => i % 10 === 0;

/** Creates the feature set (plan, coupon, subscriptions, grants); `prices` is the plain plan's price list as sent. */
async function setUpFeatures(api, { customers, prices, periodStart, periodEnd, inParallel }) {
  const plan = await api.must('POST', '/v1/plans', { name: 'Bench features', prices }, 201);
  const coupon = await api.must('POST', '/v1/coupons', { name: 'Bench 10 %', type: 'PERCENTAGE', percent_off: String(COUPON_PERCENT), duration: 'FOREVER' }, 201);
  const subscriptions = new Array(customers.length);
  const grants = [];
  await inParallel(customers.length, 32, async (i) => {
    const body = { customer_id: customers[i], plan_id: plan.id, start_date: new Date(periodStart).toISOString(), payment_terms_days: 30 };
    if (hasCoupon(i)) body.discounts = [{ coupon_id: coupon.id }];
    if (hasCommitment(i)) body.commitment_amount = COMMITMENT;
    const s = await api.must('POST', '/v1/subscriptions', body, 201);
    subscriptions[i] = s.id;
    if (Date.parse(s.current_period_end) !== periodEnd) throw new Error(`feature subscription period ends ${s.current_period_end}`);
    if (hasGrant(i)) {
      const g = await api.must('POST', '/v1/credit_grants', { subscription_id: s.id, name: 'Bench grant', credits: String(GRANT_CREDITS), cadence: 'RECURRING' }, 201);
      grants.push({ i, id: g.id, subscription_id: s.id });
    }
  });
  return { planId: plan.id, couponId: coupon.id, subscriptions, grants };
}

/**
 * Moves the set to close (`duePlanId`'s subscriptions) so that its period ended a second ago,
 * and every other subscription so that its period ends a day from now; grant cursors and
 * applications move with their subscriptions (ADR 0039: grant periods follow the anchor).
 */
async function shiftSets(pg, periodEnd, duePlanId) {
  const now = Date.now();
  const back = -Math.max(0, periodEnd - (now - 1000));
  const ahead = now + DAY_MS - periodEnd;
  await pg.query('BEGIN');
  await pg.query(`CREATE TEMP TABLE shift ON COMMIT DROP AS SELECT id, CASE WHEN plan_id = $1 THEN $2::bigint ELSE $3::bigint END * interval '1 millisecond' AS d FROM billing.subscriptions`, [duePlanId, back, ahead]);
  await pg.query(
    `UPDATE billing.subscriptions s SET start_date = start_date + x.d, billing_anchor = billing_anchor + x.d,
       current_period_start = current_period_start + x.d, current_period_end = current_period_end + x.d FROM shift x WHERE x.id = s.id`,
  );
  await pg.query(
    `UPDATE billing.credit_grant_bindings b SET starts_from = starts_from + x.d, applied_through = applied_through + x.d, next_due = next_due + x.d
     FROM shift x WHERE x.id = b.subscription_id`,
  );
  await pg.query('UPDATE billing.credit_grant_applications a SET period_start = period_start + x.d, period_end = period_end + x.d FROM shift x WHERE x.id = a.subscription_id');
  await pg.query('COMMIT');
  await pg.query('VACUUM ANALYZE billing.subscriptions');
  await pg.query('VACUUM ANALYZE billing.credit_grant_bindings');
}

/** The wallet credits a customer's invoice can take in the plain close (its wallet's 5, and its grant's when it has one). */
const plainWalletCents = (setup, i, walletCents) => (i % 2 === 0 ? walletCents : 0) + (setup.features && hasGrant(i) ? GRANT_CREDITS * 100 : 0);

/** Whether the feature close is over besides its invoices: every grant credited for the new period. */
async function grantsDone(pg, setup) {
  const { rows } = await pg.query("SELECT count(*)::int AS n FROM billing.credit_grant_applications WHERE status = 'applied'");
  return rows[0].n >= 2 * setup.features.grants.length;
}

/**
 * Correctness of a feature close: invoice count and status, lines (3, and the true-up on the
 * commitment tenth, of the expected amount), subtotal, discount (round half up of subtotal × 10
 * %, spread over the lines by their amounts, each part within a cent of its share), credits
 * (the usage lines' net, up to the wallet), totals; one applied grant application per grant
 * for the new period start and one SUBSCRIPTION_CREDIT_GRANT top-up of its key.
 */
async function verifyFeatures(pg, setup, { subtotalOf, walletCents }) {
  const f = setup.features;
  const index = new Map(f.subscriptions.map((s, i) => [s, i]));
  const { rows } = await pg.query(
    `SELECT i.id, i.subscription_id, i.status, i.invoice_number, i.subtotal, i.total_discount, i.total_prepaid_credits_applied AS applied, i.total, i.amount_due,
            (SELECT json_agg(json_build_object('type', l.line_type, 'price_type', l.price_type, 'amount', l.amount, 'discount', l.discount_amount, 'net', l.net_amount) ORDER BY l.position)
             FROM billing.invoice_line_items l WHERE l.invoice_id = i.id) AS lines
     FROM billing.invoices i WHERE billing_reason = 'SUBSCRIPTION_CYCLE' AND ${REAL_INVOICES}`,
  );
  const problems = [];
  const numbers = new Set();
  const sums = { subtotal: 0, discount: 0, applied: 0, true_ups: 0, true_up_cents: 0, discounted: 0, credited: 0 };
  for (const r of rows) {
    const i = index.get(r.subscription_id);
    if (i === undefined) {
      problems.push(`${r.id} is not a feature subscription's`);
      continue;
    }
    const charges = subtotalOf(setup.expected[i]);
    const trueUp = hasCommitment(i) ? Math.max(0, COMMITMENT - charges) : 0;
    const subtotal = charges + trueUp;
    const discount = hasCoupon(i) ? Math.floor((subtotal * COUPON_PERCENT + 50) / 100) : 0;
    const lines = r.lines;
    const tu = lines.filter((l) => l.type === 'COMMITMENT_TRUE_UP');
    if (!['finalized', 'paid'].includes(r.status)) problems.push(`${r.id} ${r.status}`);
    if (lines.length !== 3 + (trueUp > 0 ? 1 : 0)) problems.push(`${r.id} has ${lines.length} lines`);
    if (tu.length !== (trueUp > 0 ? 1 : 0) || (trueUp > 0 && Number(tu[0].amount) !== trueUp)) problems.push(`${r.id} true-up ${JSON.stringify(tu)}, expected ${trueUp}`);
    if (Number(r.subtotal) !== subtotal) problems.push(`${r.id} subtotal ${r.subtotal}, expected ${subtotal}`);
    if (Number(r.total_discount) !== discount) problems.push(`${r.id} total_discount ${r.total_discount}, expected ${discount}`);
    let parts = 0;
    for (const l of lines) {
      const share = (discount * Number(l.amount)) / subtotal;
      parts += Number(l.discount);
      if (Number(l.discount) < Math.floor(share) || Number(l.discount) > Math.ceil(share)) problems.push(`${r.id} line discount ${l.discount}, share ${share}`);
      if (Number(l.net) !== Number(l.amount) - Number(l.discount)) problems.push(`${r.id} line net ${l.net}`);
    }
    if (parts !== discount) problems.push(`${r.id} line discounts sum to ${parts}, expected ${discount}`);
    // The wallet pays the usage lines' net (allowed_price_types USAGE), up to its balance.
    const usageNet = lines.filter((l) => l.price_type === 'USAGE' && l.type !== 'COMMITMENT_TRUE_UP').reduce((a, l) => a + Number(l.net), 0);
    const cap = (i % 2 === 0 ? walletCents : 0) + (hasGrant(i) ? GRANT_CREDITS * 100 : 0);
    const applied = Math.min(cap, usageNet);
    if (Number(r.applied) !== applied) problems.push(`${r.id} credits applied ${r.applied}, expected ${applied}`);
    if (Number(r.total) !== subtotal - discount - applied || Number(r.amount_due) !== Number(r.total)) problems.push(`${r.id} total ${r.total} amount_due ${r.amount_due}`);
    numbers.add(Number(String(r.invoice_number).split('-')[2]));
    sums.subtotal += subtotal;
    sums.discount += Number(r.total_discount);
    sums.applied += Number(r.applied);
    sums.true_ups += tu.length;
    sums.true_up_cents += tu.reduce((a, l) => a + Number(l.amount), 0);
    if (Number(r.total_discount) > 0) sums.discounted += 1;
    if (Number(r.applied) > 0) sums.credited += 1;
  }
  const n = f.subscriptions.length;
  if (rows.length !== n) problems.push(`${rows.length} cycle invoices, expected ${n}`);
  const gapFree = numbers.size === rows.length && Math.min(...numbers) === 1 && Math.max(...numbers) === rows.length;
  if (!gapFree) problems.push('invoice numbers are not 1..n');
  const wantDiscounted = f.subscriptions.filter((_, i) => hasCoupon(i)).length;
  const wantTrueUps = f.subscriptions.filter((_, i) => hasCommitment(i)).length;
  if (sums.discounted !== wantDiscounted) problems.push(`${sums.discounted} discounted invoices, expected ${wantDiscounted}`);
  if (sums.true_ups !== wantTrueUps) problems.push(`${sums.true_ups} true-up lines, expected ${wantTrueUps}`);

  // Grants: per grant, one applied application for the period that started at the close (the
  // subscription's current period now), two in all (set-up and close), and one wallet top-up
  // per application key.
  const { rows: apps } = await pg.query(
    `SELECT a.grant_id, count(*)::int AS all_n,
            count(*) FILTER (WHERE a.period_start = s.current_period_start AND a.status = 'applied')::int AS new_n,
            min(a.idempotency_key) FILTER (WHERE a.period_start = s.current_period_start) AS new_key
     FROM billing.credit_grant_applications a JOIN billing.subscriptions s ON s.id = a.subscription_id GROUP BY a.grant_id`,
  );
  const byGrant = new Map(apps.map((a) => [a.grant_id, a]));
  const keys = [];
  for (const g of f.grants) {
    const a = byGrant.get(g.id);
    if (!a || a.new_n !== 1 || a.all_n !== 2) problems.push(`grant ${g.id}: ${a ? `${a.new_n} applied for the new period, ${a.all_n} in all` : 'no application'}`);
    else keys.push(a.new_key);
  }
  const { rows: tx } = await pg.query(
    `SELECT idempotency_key, count(*)::int AS n FROM wallet.transactions WHERE transaction_reason = 'SUBSCRIPTION_CREDIT_GRANT' AND idempotency_key = ANY($1) GROUP BY 1`,
    [keys],
  );
  const once = tx.filter((t) => t.n === 1).length;
  if (once !== f.grants.length || tx.length !== f.grants.length) problems.push(`${once} of ${f.grants.length} grant top-ups made once (${tx.length} keys found)`);
  const { rows: allTx } = await pg.query("SELECT count(*)::int AS n FROM wallet.transactions WHERE transaction_reason = 'SUBSCRIPTION_CREDIT_GRANT'");
  if (allTx[0].n !== 2 * f.grants.length) problems.push(`${allTx[0].n} SUBSCRIPTION_CREDIT_GRANT transactions, expected ${2 * f.grants.length}`);
  return {
    cycle_invoices: rows.length,
    finalized: rows.filter((r) => ['finalized', 'paid'].includes(r.status)).length,
    numbers_gap_free: gapFree,
    discounted_invoices: sums.discounted,
    discount_cents: sums.discount,
    true_up_lines: sums.true_ups,
    true_up_cents: sums.true_up_cents,
    credited_invoices: sums.credited,
    credits_applied_cents: sums.applied,
    subtotal_sum_cents: sums.subtotal,
    grants_applied_for_new_period: keys.length,
    grant_top_ups_once: once,
    ok: problems.length === 0,
    problems: problems.slice(0, 10),
  };
}

/** `postgres 0.5, billing 0.4, ...` */
const perProcess = (o) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ');

/** The README lines of the feature closes, with the ratio to the plain close of the same run. */
function report(closes, featureCloses, { subscriptions, events }) {
  const ratios = featureCloses.map((f, i) => (closes[i] ? Math.round((f.seconds / closes[i].seconds) * 100) / 100 : NaN));
  const worst = Math.max(...ratios);
  const checkOf = (c) =>
    c.ok
      ? `ok: ${c.cycle_invoices} finalized, numbers 1..n, ${c.discounted_invoices} discounted (${c.discount_cents} cents), ${c.true_up_lines} true-ups (${c.true_up_cents} cents), ${c.credited_invoices} credited (${c.credits_applied_cents} cents), ${c.grants_applied_for_new_period} grants applied once for the new period, ${c.grant_top_ups_once} top-ups once`
      : `FAILED ${c.problems.join('; ')}`;
  return [
    `**Closing a period with features** (the same ${subscriptions.toLocaleString('en')} customers and ${events.toLocaleString('en')} events, a second set of subscriptions: a ${COUPON_PERCENT} % coupon on half, a RECURRING grant of ${GRANT_CREDITS} credits on a quarter, a commitment of ${COMMITMENT} cents on a tenth), each on its own copy and fresh processes in the same run as the plain close: worst ratio **${worst}** (goal <= 1.3: ${worst <= 1.3 ? 'met' : 'MISSED'}).`,
    '',
    '| run | plain | features | features / plain | invoices/s | all made after | cores busy | CPU ms per invoice | load (1 min) at end | checks |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...featureCloses.map(
      (r, i) =>
        `| ${i + 1} | ${closes[i]?.seconds ?? '-'} s | ${r.seconds} s | ${ratios[i]} | ${r.invoices_per_s} | ${r.all_made_after_s} s | ${perProcess(r.cores_busy)} | ${perProcess(r.cpu_ms_per_invoice)} | ${r.load_1m_at_end} | ${checkOf(r.check)} |`,
    ),
  ];
}

module.exports = { REAL_INVOICES, setUpFeatures, shiftSets, plainWalletCents, grantsDone, verifyFeatures, perProcess, report, COUPON_PERCENT, GRANT_CREDITS, COMMITMENT };
