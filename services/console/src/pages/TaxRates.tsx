import { useState } from 'react';
import { ApiError, type Api, type Page } from '../api';
import { ErrorNote, useLoad } from '../data';
import { ActionPanel, ActionToggle, Done } from '../forms/action';
import { CreateTaxRateForm, EditTaxRateForm } from '../forms/lazy';
import { ChoiceFilter, PagedTable, type Column } from '../list';
import { when } from '../format';
import { percent, placeOf } from '../tax';
import type { TaxRate } from '../types';

const LIMIT = 25;
const asError = (err: unknown) => (err instanceof ApiError ? err : new ApiError(String(err), 0, undefined, {}));

/**
 * Tax rates of this environment (docs/api/taxes.md#tax-rates-taxesread-taxeswrite), a page at a
 * time, active or archived: create one, edit its name and description, archive it after a
 * confirm step (drafts stop bearing it; finalized invoices keep what they bore).
 */
export function TaxRatesPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const [active, setActive] = useState<'' | 'true' | 'false'>('');
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<TaxRate | null>(null);
  const [archiving, setArchiving] = useState<TaxRate | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const load = useLoad(() => api.get<Page<TaxRate>>('/v1/tax_rates', { limit: LIMIT, offset, active: active || undefined }), [offset, active, version]);
  const changed = (message: string) => {
    setCreating(false);
    setEditing(null);
    setArchiving(null);
    setDone(message);
    setVersion((v) => v + 1);
  };
  const archive = async (r: TaxRate) => {
    setError(null);
    try {
      await api.delete(`/v1/tax_rates/${encodeURIComponent(r.id)}`);
      changed(`Tax rate ${r.code} archived.`);
    } catch (err) {
      setError(asError(err));
    }
  };
  const columns: Column<TaxRate>[] = [
    ...COLUMNS,
    {
      header: 'Actions',
      cell: (r) =>
        r.active ? (
          <div className="buttons nowrap">
            <button type="button" className="secondary" aria-label={`Edit ${r.code}`} onClick={() => { setCreating(false); setEditing(r); }}>
              Edit
            </button>
            <button type="button" className="danger" aria-label={`Archive ${r.code}`} onClick={() => setArchiving(r)}>
              Archive
            </button>
          </div>
        ) : (
          '–'
        ),
    },
  ];
  return (
    <section aria-labelledby="tax-rates-title">
      <h1 id="tax-rates-title">Tax rates</h1>
      <div className="actions">
        <ActionToggle label="New tax rate" open={creating} controls="tax-rate-create" onToggle={() => { setEditing(null); setCreating(!creating); }} />
      </div>
      {creating && (
        <ActionPanel id="tax-rate-create">
          <CreateTaxRateForm api={api} onCancel={() => setCreating(false)} onDone={(r) => changed(`Tax rate ${r.code} created.`)} />
        </ActionPanel>
      )}
      {editing && (
        <ActionPanel id="tax-rate-edit">
          <EditTaxRateForm key={editing.id} api={api} rate={editing} onCancel={() => setEditing(null)} onDone={(r) => changed(`Tax rate ${r.code} saved.`)} />
        </ActionPanel>
      )}
      {archiving && (
        <div role="alertdialog" aria-labelledby="archive-title" className="confirm">
          <h2 id="archive-title">Archive the tax rate “{archiving.code}”?</h2>
          <p>Drafts stop bearing it when they are next priced or finalized; finalized invoices keep what they bore. It stays readable and cannot be made active again.</p>
          <button type="button" className="danger" onClick={() => void archive(archiving)}>
            Archive {archiving.code}
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setArchiving(null)}>
            Cancel
          </button>
        </div>
      )}
      {error && <ErrorNote error={error} />}
      <Done message={done} />
      <div className="filters">
        <ChoiceFilter
          label="Status"
          value={active}
          choices={ACTIVE}
          onChange={(v) => {
            setOffset(0);
            setActive(v);
          }}
        />
      </div>
      <PagedTable load={load} columns={columns} empty="No tax rates." label="Tax rates" onOffset={setOffset} />
    </section>
  );
}

const ACTIVE = [
  ['', 'any'],
  ['true', 'active'],
  ['false', 'archived'],
] as const;

const COLUMNS: Column<TaxRate>[] = [
  { header: 'Code', cell: (r) => r.code },
  { header: 'Name', cell: (r) => r.name },
  { header: 'Percentage', cell: (r) => percent(r.percentage) },
  { header: 'Type', cell: (r) => r.tax_type },
  { header: 'Applies in', cell: (r) => placeOf(r) },
  { header: 'Description', cell: (r) => r.description ?? '–' },
  { header: 'Status', cell: (r) => (r.active ? 'active' : 'archived') },
  { header: 'Created', cell: (r) => when(r.created_at) },
];
