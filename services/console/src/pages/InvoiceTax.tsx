import { money } from '../format';
import { isTaxed, lineRates, percent, rateLabel, taxIdText } from '../tax';
import type { Invoice, InvoiceLine } from '../types';

/**
 * The tax an invoice bore (docs/api/taxes.md#invoices-bearing-tax), as its documents show it: a
 * line's rates and tax, the breakdown per rate (0 % rates too), the buyer's tax identity, and
 * what a reverse charge or an exemption means. An invoice of taxes off shows none of it.
 */
export function LineTax({ line, currency }: { line: InvoiceLine; currency: string }) {
  return (
    <>
      {lineRates(line)}
      {line.taxes.length > 0 && (
        <>
          <br />
          <span className="hint">{money(line.tax_amount, currency)}</span>
        </>
      )}
    </>
  );
}

/** A line's amount, marked when it holds its tax (an inclusive price). */
export function LineAmount({ line, currency }: { line: InvoiceLine; currency: string }) {
  return (
    <>
      {money(line.amount, currency)}
      {line.tax_behavior === 'inclusive' && line.taxes.length > 0 && (
        <>
          <br />
          <span className="hint">incl. tax</span>
        </>
      )}
    </>
  );
}

/** The totals' tax rows (before the credits): what the invoice bills before tax, and its tax. */
export function TaxTotals({ invoice: i }: { invoice: Invoice }) {
  if (!isTaxed(i)) return null;
  return (
    <>
      <dt>Total excluding tax</dt>
      <dd>{money(i.total_excluding_tax, i.currency)}</dd>
      <dt>{i.reverse_charge ? 'Tax (reverse charge)' : 'Tax'}</dt>
      <dd>{money(i.total_tax, i.currency)}</dd>
    </>
  );
}

export function TaxSummary({ invoice: i }: { invoice: Invoice }) {
  if (!isTaxed(i)) return null;
  const buyer = i.buyer_tax;
  return (
    <>
      {i.reverse_charge && (
        <p className="notice" role="note">
          <strong>Reverse charge.</strong> The buyer accounts for the tax: no line bears any. The documents print the seller’s legal text.
        </p>
      )}
      {i.tax_exempt_reason === 'customer_exempt' && (
        <p className="notice" role="note">
          <strong>Tax exempt.</strong> The buyer is exempt from tax: no line bears any.
        </p>
      )}
      {i.tax_breakdown.length > 0 && (
        <table>
          <caption>Tax breakdown</caption>
          <thead>
            <tr>
              <th scope="col">Rate</th>
              <th scope="col">Percentage</th>
              <th scope="col">Taxable amount</th>
              <th scope="col">Tax</th>
            </tr>
          </thead>
          <tbody>
            {i.tax_breakdown.map((b) => (
              <tr key={b.tax_rate_id}>
                <td>{rateLabel(b)}</td>
                <td>{percent(b.percentage)}</td>
                <td>{money(b.taxable_amount, i.currency)}</td>
                <td>{money(b.amount, i.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {buyer && (
        <dl className="facts buyer-tax">
          <dt>Buyer’s tax</dt>
          <dd>
            {[buyer.tax_exempt === 'none' ? 'taxable' : buyer.tax_exempt, buyer.address_state ? `${buyer.address_country ?? ''} ${buyer.address_state}` : buyer.address_country].filter(Boolean).join(', ')}
          </dd>
          <dt>Buyer’s tax ids</dt>
          <dd>{buyer.tax_ids.length ? buyer.tax_ids.map(taxIdText).join(', ') : 'none'}</dd>
        </dl>
      )}
    </>
  );
}
