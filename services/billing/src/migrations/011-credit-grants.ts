import type { Migration } from '@billstream/db';

/**
 * Credit grants (docs/api/credit-grants.md, ADR 0039): a grant targets a plan or a subscription;
 * `credit_grant_bindings` holds which grants a subscription takes (a plan's as at the
 * subscription's creation, like its prices) with the cursor of the period job
 * (`next_due`, `claimed_until`); `credit_grant_applications` is one row per grant,
 * subscription and period start, the billing half of exactly once (the wallet's idempotency
 * key `cgrant:{grant}:{subscription}:{period_start}` is the other). Expand-only: new tables.
 */
export function creditGrantsMigration(schema: string): Migration {
  return {
    name: '011_credit_grants',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.credit_grants (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          plan_id text REFERENCES ??.plans (id),
          subscription_id text REFERENCES ??.subscriptions (id),
          name text NOT NULL,
          credits numeric NOT NULL,
          cadence text NOT NULL,
          period text,
          expire_in_days integer,
          priority integer,
          conversion_rate numeric,
          metadata jsonb NOT NULL DEFAULT '{}',
          status text NOT NULL,
          archived_at timestamptz,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CONSTRAINT credit_grants_one_target CHECK ((plan_id IS NULL) <> (subscription_id IS NULL)),
          CONSTRAINT credit_grants_credits CHECK (credits > 0),
          CONSTRAINT credit_grants_cadence CHECK (cadence IN ('ONETIME', 'RECURRING') AND (cadence = 'RECURRING' OR period IS NULL)),
          CONSTRAINT credit_grants_status CHECK (status IN ('active', 'archived') AND (status = 'archived') = (archived_at IS NOT NULL))
        )`,
        [schema, schema, schema],
      );
      await db.raw('CREATE INDEX credit_grants_created ON ??.credit_grants (tenant_id, environment_id, created_at, id)', [schema]);
      await db.raw('CREATE INDEX credit_grants_of_plan ON ??.credit_grants (plan_id) WHERE plan_id IS NOT NULL', [schema]);
      await db.raw('CREATE INDEX credit_grants_of_subscription ON ??.credit_grants (subscription_id) WHERE subscription_id IS NOT NULL', [schema]);
      await db.raw(
        `CREATE TABLE ??.credit_grant_bindings (
          subscription_id text NOT NULL REFERENCES ??.subscriptions (id),
          grant_id text NOT NULL REFERENCES ??.credit_grants (id),
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          starts_from timestamptz,
          applied_through timestamptz,
          next_due timestamptz,
          claimed_until timestamptz,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (subscription_id, grant_id)
        )`,
        [schema, schema, schema],
      );
      await db.raw('CREATE INDEX credit_grant_bindings_due ON ??.credit_grant_bindings (next_due) WHERE next_due IS NOT NULL', [schema]);
      await db.raw('CREATE INDEX credit_grant_bindings_of_grant ON ??.credit_grant_bindings (grant_id)', [schema]);
      await db.raw(
        `CREATE TABLE ??.credit_grant_applications (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          grant_id text NOT NULL REFERENCES ??.credit_grants (id),
          subscription_id text NOT NULL REFERENCES ??.subscriptions (id),
          customer_id text NOT NULL,
          currency text NOT NULL,
          period_start timestamptz NOT NULL,
          period_end timestamptz NOT NULL,
          credits numeric NOT NULL,
          expiry_date timestamptz,
          priority integer,
          conversion_rate numeric NOT NULL,
          description text NOT NULL,
          idempotency_key text NOT NULL,
          status text NOT NULL,
          skip_reason text,
          wallet_id text,
          wallet_transaction_id text,
          attempts integer NOT NULL DEFAULT 0,
          next_attempt_at timestamptz,
          applied_at timestamptz,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CONSTRAINT credit_grant_applications_once UNIQUE (grant_id, subscription_id, period_start),
          CONSTRAINT credit_grant_applications_status CHECK (
            (status = 'pending' AND wallet_transaction_id IS NULL AND next_attempt_at IS NOT NULL)
            OR (status = 'applied' AND wallet_transaction_id IS NOT NULL AND applied_at IS NOT NULL AND next_attempt_at IS NULL)
            OR (status = 'skipped' AND skip_reason IS NOT NULL AND wallet_transaction_id IS NULL AND next_attempt_at IS NULL))
        )`,
        [schema, schema, schema],
      );
      await db.raw('CREATE INDEX credit_grant_applications_of_grant ON ??.credit_grant_applications (grant_id, period_start, id)', [schema]);
      await db.raw("CREATE INDEX credit_grant_applications_pending ON ??.credit_grant_applications (next_attempt_at) WHERE status = 'pending'", [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.credit_grant_applications', [schema]);
      await db.raw('DROP TABLE ??.credit_grant_bindings', [schema]);
      await db.raw('DROP TABLE ??.credit_grants', [schema]);
    },
  };
}
