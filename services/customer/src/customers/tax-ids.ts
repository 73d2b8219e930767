import { ValidationError } from '@billstream/errors';
import * as stdnumLib from 'stdnum';

/** The tax id types a customer may carry (docs/api/customers.md#tax-identity, ADR 0066). */
export const TAX_ID_TYPES = ['eu_vat', 'gb_vat', 'ch_vat', 'no_vat', 'au_abn', 'nz_gst', 'ca_bn', 'in_gst', 'us_ein', 'br_cnpj'] as const;
export type TaxIdType = (typeof TAX_ID_TYPES)[number];
export const TAX_EXEMPTIONS = ['none', 'exempt', 'reverse'] as const;
export type TaxExempt = (typeof TAX_EXEMPTIONS)[number];

export interface TaxId {
  type: TaxIdType;
  value: string;
}

interface Validator {
  validate(value: string): { isValid: boolean; error?: Error };
}
type Stdnum = { stdnum: Record<string, Record<string, Validator>>; euVat: Record<string, Validator[]> };

// The port of python-stdnum (ADR 0066): every country's numbers, format and checksum.
const lib = stdnumLib as unknown as Stdnum;
const stdnum = (): Stdnum => lib;

/** The validator of a value of a type; for `eu_vat`, the member state its prefix names (EL is Greece). */
function validatorOf(type: TaxIdType, value: string): Validator | undefined {
  const { stdnum: by, euVat } = stdnum();
  switch (type) {
    case 'eu_vat': {
      const prefix = value.slice(0, 2).toUpperCase();
      const ofState = euVat[prefix === 'EL' ? 'GR' : prefix];
      if (!ofState || ofState.length === 0) return undefined;
      // A member state's VAT numbers (some states have more than one form): valid when one of them says so.
      return { validate: (v) => ofState.map((x) => x.validate(v)).find((r) => r.isValid) ?? ofState[0]!.validate(v) };
    }
    case 'gb_vat':
      return by.GB?.vat;
    case 'ch_vat':
      return by.CH?.vat;
    case 'no_vat':
      return by.NO?.mva;
    case 'au_abn':
      return by.AU?.abn;
    case 'nz_gst':
      return by.NZ?.ird;
    case 'ca_bn':
      return by.CA?.bn;
    case 'in_gst':
      return by.IN?.gstin;
    case 'us_ein':
      return by.US?.ein;
    case 'br_cnpj':
      return by.BR?.cnpj;
  }
}

/** Checks each id's format and checksum; the first bad one is a 400 naming `tax_ids.{i}.value`. */
export function assertTaxIds(ids: readonly TaxId[]): void {
  ids.forEach((id, i) => {
    const field = `tax_ids.${i}.value`;
    const validator = validatorOf(id.type, id.value);
    if (!validator) {
      throw new ValidationError(`${field} must start with an EU member state's prefix (like DE or EL) for an eu_vat id`, { field, value: id.value });
    }
    const result = validator.validate(id.value);
    if (!result.isValid) {
      const why = result.error?.message ?? 'is not valid';
      throw new ValidationError(`${field} is not a valid ${id.type} number: ${why}`, { field, value: id.value });
    }
  });
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    const key = `${id.type}|${id.value.replace(/[\s.\-/]/g, '').toUpperCase()}`;
    if (seen.has(key)) throw new ValidationError(`tax_ids.${i} repeats an earlier tax id`, { field: `tax_ids.${i}.value`, value: id.value });
    seen.add(key);
  });
}
