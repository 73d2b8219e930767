import type { Migration } from '@billstream/db';

/**
 * Tax rates (docs/api/taxes.md, ADR 0065): a rate's percentage never changes (a new percentage is
 * a new rate), so an invoice that bore it keeps its figures; archiving sets `active` false. The
 * code is unique per tenant and environment.
 */
export function taxRatesMigration(schema: string): Migration {
  return {
    name: '023_tax_rates',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.tax_rates (
           id text PRIMARY KEY,
           tenant_id text NOT NULL,
           environment_id text NOT NULL,
           code text NOT NULL,
           name text NOT NULL,
           percentage numeric(7, 4) NOT NULL CHECK (percentage >= 0 AND percentage <= 100),
           tax_type text NOT NULL,
           country text,
           region text,
           description text,
           active boolean NOT NULL DEFAULT true,
           created_at timestamptz NOT NULL,
           updated_at timestamptz NOT NULL,
           UNIQUE (tenant_id, environment_id, code)
         )`,
        [schema],
      );
      await db.raw('CREATE INDEX tax_rates_scope_created ON ??.tax_rates (tenant_id, environment_id, created_at, id)', [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.tax_rates', [schema]);
    },
  };
}
