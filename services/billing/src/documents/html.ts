import { buyerLines, formatDate, formatDecimal, formatMinor, formatQuantity, sellerLines, statusLabel, totalRows, type DocumentModel } from './model';
import { breakdownRows, isInclusive, isTaxed, lineRates, taxNotices } from './tax';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML text and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const e = escapeHtml;

const CSS = `
*{box-sizing:border-box}body{margin:0;background:#f3f4f6;font-family:"Noto Sans","Helvetica Neue",Arial,"Noto Sans CJK SC","Noto Sans SC","PingFang SC","Hiragino Sans","Microsoft YaHei","Droid Sans Fallback",sans-serif;color:#111827;font-size:14px;line-height:1.45}
.page{max-width:820px;margin:24px auto;background:#fff;padding:40px 48px;box-shadow:0 1px 3px rgba(0,0,0,.12);position:relative}
header{display:flex;justify-content:space-between;gap:24px;border-bottom:2px solid #111827;padding-bottom:16px}
h1{font-size:28px;margin:0 0 6px;letter-spacing:.04em}.seller-name{font-size:18px;font-weight:700}.muted{color:#6b7280}
.logo{max-height:56px;max-width:200px;display:block;margin-bottom:8px}
.meta{text-align:right}.meta table{margin-left:auto;border-collapse:collapse}.meta td{padding:1px 0 1px 12px}
.parties{display:flex;gap:48px;margin:20px 0}.parties h2{font-size:12px;text-transform:uppercase;color:#6b7280;margin:0 0 4px;letter-spacing:.06em}
table.lines{width:100%;border-collapse:collapse;margin-top:8px}.lines th{text-align:left;font-size:12px;text-transform:uppercase;color:#6b7280;border-bottom:1px solid #d1d5db;padding:6px 4px}
.lines th.num{text-align:right}.lines td{border-bottom:1px solid #e5e7eb;padding:8px 4px;vertical-align:top}.num{text-align:right;white-space:nowrap}
.totals{margin-left:auto;margin-top:16px;border-collapse:collapse;min-width:320px}.totals td{padding:3px 4px}.totals .strong td{font-weight:700;border-top:1px solid #111827}
h3{font-size:14px;margin:24px 0 4px}.small{font-size:12px}
.stamp{position:absolute;top:250px;right:56px;transform:rotate(-12deg);border:4px solid;padding:4px 16px;font-size:32px;font-weight:800;letter-spacing:.1em;opacity:.8}
.stamp.VOID{color:#b91c1c}.stamp.PAID{color:#047857}.stamp.OVERDUE{color:#b45309}
.notice{margin-top:16px;border:1px solid #d1d5db;background:#f9fafb;padding:8px 12px}.notice strong{display:block}
footer{margin-top:32px;border-top:1px solid #e5e7eb;padding-top:12px;color:#6b7280;font-size:12px;white-space:pre-line}
@media print{body{background:#fff}.page{box-shadow:none;margin:0;max-width:none;padding:0}}
`;

/** The invoice as one self-contained printable page: inline CSS, no script, no resource but an https logo; every text escaped. */
export function renderHtml(m: DocumentModel): string {
  const i = m.invoice;
  const money = (amount: number) => e(formatMinor(amount, i.currency));
  const stamp = statusLabel(i);
  const taxed = isTaxed(i);
  // A taxed invoice's lines show the rates and tax of each (docs/api/taxes.md#documents); an inclusive line's amount holds its tax.
  const taxCell = (l: DocumentModel['invoice']['line_items'][number]) =>
    taxed ? `<td class="num">${e(lineRates(l))}${l.taxes.length ? `<div class="muted small">${money(l.tax_amount)}</div>` : ''}</td>` : '';
  const lines = i.line_items
    .map(
      (l) => `<tr><td>${e(l.description)}${l.period_start ? `<div class="muted small">${e(formatDate(l.period_start))} – ${e(formatDate(l.period_end))}</div>` : ''}</td>` +
        `<td class="num">${e(formatQuantity(l.quantity))}</td><td class="num">${e(formatDecimal(l.unit_amount, i.currency))}</td>` +
        `<td class="num">${l.discount_amount ? money(-l.discount_amount) : ''}</td>${taxCell(l)}<td class="num">${money(l.amount)}${isInclusive(l) ? '<div class="muted small">incl. tax</div>' : ''}</td></tr>`,
    )
    .join('');
  const breakdown = taxed && i.tax_breakdown.length
    ? `<h3>Tax breakdown</h3><table class="lines tax-breakdown"><thead><tr><th>Rate</th><th class="num">Percentage</th><th class="num">Taxable amount</th><th class="num">Tax</th></tr></thead><tbody>${breakdownRows(i)
        .map((b) => `<tr><td>${e(b.rate)}</td><td class="num">${e(b.percentage)}</td><td class="num">${money(b.taxable)}</td><td class="num">${money(b.tax)}</td></tr>`)
        .join('')}</tbody></table>`
    : '';
  const notices = taxNotices(i, m.seller)
    .map((n) => `<div class="notice"><strong>${e(n.title)}</strong>${e(n.text)}</div>`)
    .join('');
  const totals = totalRows(i)
    .map((r) => `<tr${r.strong ? ' class="strong"' : ''}><td>${e(r.label)}</td><td class="num">${money(r.amount)}</td></tr>`)
    .join('');
  const discounts = i.discounts.length
    ? `<h3>Discounts</h3><table class="lines"><tbody>${i.discounts.map((d) => `<tr><td>${e(d.discount_id)}</td><td class="num">${money(-d.amount)}</td></tr>`).join('')}</tbody></table>`
    : '';
  const payments = m.payments.length
    ? `<h3>Payments</h3><table class="lines"><thead><tr><th>Date</th><th>Method</th><th>Reference</th><th>Status</th><th class="num">Amount</th></tr></thead><tbody>${m.payments
        .map((p) => `<tr><td>${e(formatDate(p.date))}</td><td>${e(p.method)}</td><td>${e(p.reference ?? '')}</td><td>${e(p.status)}</td><td class="num">${money(p.amount)}</td></tr>`)
        .join('')}</tbody></table>`
    : '';
  const notes = m.creditNotes.length
    ? `<h3>Credit notes</h3><table class="lines"><thead><tr><th>Number</th><th>Date</th><th>Reason</th><th>Status</th>${taxed ? '<th class="num">Tax</th><th class="num">Total</th>' : '<th class="num">Amount</th>'}</tr></thead><tbody>${m.creditNotes
        .map(
          (n) => `<tr><td>${e(n.number)}</td><td>${e(formatDate(n.date))}</td><td>${e(n.reason)}</td><td>${e(n.status)}</td>` +
            (taxed ? `<td class="num">${money(-(n.tax ?? 0))}</td><td class="num">${money(-(n.total ?? n.amount))}</td>` : `<td class="num">${money(-n.amount)}</td>`) + '</tr>',
        )
        .join('')}</tbody></table>`
    : '';
  const logo = m.seller?.logo_url && /^https:\/\//.test(m.seller.logo_url) ? `<img class="logo" src="${e(m.seller.logo_url)}" alt="">` : '';
  const period = i.period_start ? `<tr><td class="muted">Period</td><td>${e(formatDate(i.period_start))} – ${e(formatDate(i.period_end))}</td></tr>` : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src https:">
<title>Invoice ${e(i.invoice_number ?? i.id)}</title><style>${CSS}</style></head>
<body><main class="page">
${stamp ? `<div class="stamp ${stamp}">${stamp}</div>` : ''}
<header><div>${logo}<div class="seller-name">${e(m.seller?.company_name ?? '')}</div>${sellerLines(m.seller).map((l) => `<div>${e(l)}</div>`).join('')}</div>
<div class="meta"><h1>INVOICE</h1><table>
<tr><td class="muted">Number</td><td>${e(i.invoice_number ?? '')}</td></tr>
<tr><td class="muted">Issue date</td><td>${e(formatDate(i.finalized_at))}</td></tr>
<tr><td class="muted">Due date</td><td>${e(formatDate(i.due_date))}</td></tr>
${period}</table></div></header>
<section class="parties"><div><h2>Bill to</h2><div><strong>${e(m.buyer.name ?? m.buyer.external_id ?? m.buyer.id)}</strong></div>${buyerLines(m.buyer, i).map((l) => `<div>${e(l)}</div>`).join('')}</div></section>
<table class="lines"><thead><tr><th>Description</th><th class="num">Quantity</th><th class="num">Unit amount</th><th class="num">Discount</th>${taxed ? '<th class="num">Tax</th>' : ''}<th class="num">Amount</th></tr></thead><tbody>${lines}</tbody></table>
<table class="totals"><tbody>${totals}</tbody></table>
${breakdown}${notices}${discounts}${payments}${notes}
${m.seller?.footer ? `<footer>${e(m.seller.footer)}</footer>` : ''}
</main></body></html>
`;
}

/** A signed link's refusal as a page a person understands (410: expired or revoked; 401: not a valid link). */
export function renderLinkError(status: number, message: string): string {
  const title = status === 410 ? 'This invoice link no longer works' : 'This invoice link is not valid';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title><style>${CSS}</style></head>
<body><main class="page"><h1>${e(title)}</h1><p>${e(message)}</p>
<p class="muted">Ask the seller to send you a new link to the invoice. (HTTP ${status})</p></main></body></html>
`;
}
