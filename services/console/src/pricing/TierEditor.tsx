import { useMemo, useState } from 'react';
import { money } from '../format';
import { draftOf, preview, type Draft, type DraftTier } from './draft';
import type { Price } from './types';

/**
 * Edits a usage price's model in the browser only (nothing is saved) and previews what it bills
 * for a quantity the person types, with the calculator billing uses (libs/pricing).
 */
export function TierEditor({ price }: { price: Price }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(price));
  const [quantity, setQuantity] = useState('100');
  const result = useMemo(() => preview(draft, quantity), [draft, quantity]);
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const setTier = (i: number, patch: Partial<DraftTier>) => setDraft((d) => ({ ...d, tiers: d.tiers.map((t, j) => (j === i ? { ...t, ...patch } : t)) }));
  const name = price.display_name ?? price.id;
  return (
    <section aria-labelledby="editor-title" className="editor">
      <h2 id="editor-title">Price preview: {name}</h2>
      <p className="hint">Edits stay in this page: nothing is saved. A price never changes once made (a change is a new price).</p>
      <div className="filters">
        {draft.billingModel !== 'TIERED' && (
          <label>
            {draft.billingModel === 'PACKAGE' ? 'Amount per package' : 'Unit amount'}
            <input value={draft.amount} inputMode="decimal" onChange={(e) => set({ amount: e.target.value })} />
          </label>
        )}
        {draft.billingModel === 'PACKAGE' && (
          <>
            <label>
              Package size
              <input value={draft.packageSize} inputMode="decimal" onChange={(e) => set({ packageSize: e.target.value })} />
            </label>
            <label>
              Rounding
              <select value={draft.packageRound} onChange={(e) => set({ packageRound: e.target.value as Draft['packageRound'] })}>
                <option value="UP">up (a started package counts)</option>
                <option value="DOWN">down</option>
              </select>
            </label>
          </>
        )}
        {draft.billingModel === 'TIERED' && (
          <label>
            Tier mode
            <select value={draft.tierMode} onChange={(e) => set({ tierMode: e.target.value as Draft['tierMode'] })}>
              <option value="VOLUME">volume (all units at the tier reached)</option>
              <option value="SLAB">slab (each tier bills its own units)</option>
            </select>
          </label>
        )}
      </div>
      {draft.billingModel === 'TIERED' && <TierRows tiers={draft.tiers} setTier={setTier} setTiers={(tiers) => set({ tiers })} />}
      <div className="filters">
        <label>
          Quantity
          <input value={quantity} inputMode="decimal" onChange={(e) => setQuantity(e.target.value)} />
        </label>
      </div>
      <div aria-live="polite">
        {result.ok ? (
          <>
            <p className="totals" data-testid="preview-total">
              {`Total for ${quantity.trim()}: ${money(result.total, draft.currency)}`}
            </p>
            <table>
              <caption>Lines the invoice would hold</caption>
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Quantity</th>
                  <th scope="col">Unit amount</th>
                  <th scope="col">Amount</th>
                </tr>
              </thead>
              <tbody>
                {result.lines.map((l, i) => (
                  <tr key={i}>
                    <td>{l.description}</td>
                    <td>{l.quantity}</td>
                    <td>{l.unitAmount}</td>
                    <td>{money(l.amount, draft.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : (
          <p className="error" role="alert">
            {result.message}
          </p>
        )}
      </div>
    </section>
  );
}

function TierRows({ tiers, setTier, setTiers }: { tiers: DraftTier[]; setTier: (i: number, patch: Partial<DraftTier>) => void; setTiers: (tiers: DraftTier[]) => void }) {
  return (
    <table>
      <caption>Tiers (the last one holds every unit above the one before)</caption>
      <thead>
        <tr>
          <th scope="col">Tier</th>
          <th scope="col">Up to (inclusive)</th>
          <th scope="col">Unit amount</th>
          <th scope="col">Flat amount</th>
          <th scope="col">
            <span className="visually-hidden">Remove</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {tiers.map((t, i) => (
          <tr key={i}>
            <th scope="row">{i + 1}</th>
            <td>
              <input aria-label={`Tier ${i + 1} up to`} value={t.upTo} placeholder={i === tiers.length - 1 ? 'and above' : ''} inputMode="decimal" onChange={(e) => setTier(i, { upTo: e.target.value })} />
            </td>
            <td>
              <input aria-label={`Tier ${i + 1} unit amount`} value={t.unitAmount} inputMode="decimal" onChange={(e) => setTier(i, { unitAmount: e.target.value })} />
            </td>
            <td>
              <input aria-label={`Tier ${i + 1} flat amount`} value={t.flatAmount} inputMode="decimal" onChange={(e) => setTier(i, { flatAmount: e.target.value })} />
            </td>
            <td>
              <button type="button" disabled={tiers.length === 1} onClick={() => setTiers(tiers.filter((_, j) => j !== i))}>
                Remove tier {i + 1}
              </button>
            </td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <td colSpan={5}>
            <button type="button" onClick={() => setTiers([...tiers.slice(0, -1), { upTo: '', unitAmount: '0', flatAmount: '' }, ...tiers.slice(-1)])}>
              Add a tier before the last
            </button>
          </td>
        </tr>
      </tfoot>
    </table>
  );
}
