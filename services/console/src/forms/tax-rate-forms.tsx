import { TAX_TYPES, taxRateApi } from '@billstream/contracts';
import type { Api } from '../api';
import type { TaxRate } from '../types';
import { ActionForm, filled, type Values } from './kit';

/** `POST /v1/tax_rates` (tax rates page): the rate's code, name, percentage and type, where it applies, and a description. */
export function CreateTaxRateForm({ api, onDone, onCancel }: { api: Api; onDone: (rate: TaxRate) => void; onCancel: () => void }) {
  return (
    <ActionForm<TaxRate>
      api={api}
      title="Create a tax rate"
      route={taxRateApi.createTaxRate}
      fields={[
        { name: 'code', label: 'Code', hint: 'Unique in this environment: letters, digits, "_", "." or "-", e.g. DE_VAT_19.' },
        { name: 'name', label: 'Name', hint: 'As people read it, e.g. Umsatzsteuer 19 %.' },
        { name: 'percentage', label: 'Percentage', hint: 'From 0 to 100, at most 4 decimals, e.g. 19 or 7.25. Fixed for life: a new percentage is a new rate.' },
        { name: 'tax_type', label: 'Tax type', kind: 'select', options: TAX_TYPES },
        { name: 'country', label: 'Country', hint: 'Optional: ISO 3166-1 alpha-2 in capitals, e.g. DE. Buyers of this country bear it when nothing names their rates.' },
        { name: 'region', label: 'Region', hint: 'Optional, needs the country: ISO 3166-2, e.g. US-CA.' },
        { name: 'description', label: 'Description', kind: 'textarea' },
      ]}
      initial={{ tax_type: 'VAT' }}
      submitLabel="Create tax rate"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}

/** `PUT /v1/tax_rates/{id}`: its name and description only (an empty description clears it). */
export function EditTaxRateForm({ api, rate, onDone, onCancel }: { api: Api; rate: TaxRate; onDone: (rate: TaxRate) => void; onCancel: () => void }) {
  const body = (v: Values) => ({ name: (v.name ?? '').trim(), description: filled(v).description ?? null });
  return (
    <ActionForm<TaxRate>
      api={api}
      title={`Edit ${rate.code}`}
      route={taxRateApi.updateTaxRate}
      params={{ id: rate.id }}
      fields={[
        { name: 'name', label: 'Name' },
        { name: 'description', label: 'Description', kind: 'textarea', hint: 'Empty: none.' },
      ]}
      initial={{ name: rate.name, description: rate.description ?? '' }}
      body={body}
      submitLabel="Save tax rate"
      onDone={onDone}
      onCancel={onCancel}
    />
  );
}
