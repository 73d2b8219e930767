import type { Scope } from '@billstream/contracts';
import { rowsOf, type Conn, type Knex, type Trx } from '@billstream/db';
import { exact, toDecimalString } from '@billstream/money';
import type { AlertLevel, AlertSettings, AlertState, AutoTopup, PriceType, Wallet, WalletStatus, WalletType } from './domain';

/** The active wallets an invoice of a customer in a currency pays from (`WalletStore.activeIdsOf`). */
export interface ActiveWalletIds {
  prepaid?: string;
  postpaid?: string;
}

/** The key of a (customer, currency) pair in `WalletStore.activeIdsOf`'s answer. */
export const activeWalletsKey = (p: Pick<Wallet, 'customerId' | 'currency'>): string => `${p.customerId}\u0000${p.currency}`;

interface AlertLevelRow {
  threshold: string;
  condition: 'below';
}

interface AlertSettingsRow {
  alert_enabled: boolean;
  critical?: AlertLevelRow;
  warning?: AlertLevelRow;
  info?: AlertLevelRow;
}

interface AutoTopupRow {
  enabled: boolean;
  threshold: string | null;
  amount: string | null;
  invoicing: boolean;
}

export interface WalletRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  customer_id: string;
  currency: string;
  wallet_type: WalletType;
  wallet_status: WalletStatus;
  credit_balance: string;
  pending_credits: string;
  pending_debits: string;
  conversion_rate: string;
  topup_conversion_rate: string;
  allowed_price_types: PriceType[] | string;
  description: string | null;
  metadata: Record<string, string> | string;
  auto_topup: AutoTopupRow | string | null;
  alert_settings: AlertSettingsRow | string | null;
  alert_state: AlertState;
  ongoing_alert_state: AlertState;
  ledger_seq: number;
  version: number;
  created_at: Date;
  updated_at: Date;
  /** From `unbilled_usage` (a join), when read. */
  unbilled_amount?: string | number | null;
  unbilled_as_of?: Date | string | null;
  unbilled_invoices?: Record<string, number> | string | null;
}

function json<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

function levelFromRow(row: AlertLevelRow | undefined): AlertLevel | undefined {
  return row ? { threshold: exact(row.threshold), condition: row.condition } : undefined;
}

function levelToRow(level: AlertLevel | undefined): AlertLevelRow | undefined {
  return level ? { threshold: toDecimalString(level.threshold), condition: level.condition } : undefined;
}

export function walletFromRow(row: WalletRow): Wallet {
  const autoTopup = row.auto_topup === null ? null : json<AutoTopupRow>(row.auto_topup);
  const alerts = row.alert_settings === null ? null : json<AlertSettingsRow>(row.alert_settings);
  return {
    id: row.id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    customerId: row.customer_id,
    currency: row.currency,
    walletType: row.wallet_type,
    walletStatus: row.wallet_status,
    creditBalance: exact(row.credit_balance),
    pendingCredits: exact(row.pending_credits),
    pendingDebits: exact(row.pending_debits),
    conversionRate: exact(row.conversion_rate),
    topupConversionRate: exact(row.topup_conversion_rate),
    allowedPriceTypes: json<PriceType[]>(row.allowed_price_types),
    description: row.description,
    metadata: json<Record<string, string>>(row.metadata),
    autoTopup: autoTopup && {
      enabled: autoTopup.enabled,
      threshold: autoTopup.threshold === null ? null : exact(autoTopup.threshold),
      amount: autoTopup.amount === null ? null : exact(autoTopup.amount),
      invoicing: autoTopup.invoicing,
    },
    alertSettings: alerts && {
      alertEnabled: alerts.alert_enabled,
      critical: levelFromRow(alerts.critical),
      warning: levelFromRow(alerts.warning),
      info: levelFromRow(alerts.info),
    },
    alertState: row.alert_state,
    ongoingAlertState: row.ongoing_alert_state,
    unbilledUsage: exact(row.unbilled_amount ?? 0),
    unbilledAsOf: row.unbilled_as_of ? new Date(row.unbilled_as_of) : null,
    unbilledInvoices: row.unbilled_invoices ? json<Record<string, number>>(row.unbilled_invoices) : {},
    ledgerSeq: Number(row.ledger_seq),
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function autoTopupToRow(a: AutoTopup | null): string | null {
  if (!a) return null;
  const row: AutoTopupRow = {
    enabled: a.enabled,
    threshold: a.threshold && toDecimalString(a.threshold),
    amount: a.amount && toDecimalString(a.amount),
    invoicing: a.invoicing,
  };
  return JSON.stringify(row);
}

function alertSettingsToRow(a: AlertSettings | null): string | null {
  if (!a) return null;
  const row: AlertSettingsRow = {
    alert_enabled: a.alertEnabled,
    critical: levelToRow(a.critical),
    warning: levelToRow(a.warning),
    info: levelToRow(a.info),
  };
  return JSON.stringify(row);
}

export function walletToRow(w: Wallet): Record<string, unknown> {
  return {
    id: w.id,
    tenant_id: w.tenantId,
    environment_id: w.environmentId,
    customer_id: w.customerId,
    currency: w.currency,
    wallet_type: w.walletType,
    wallet_status: w.walletStatus,
    credit_balance: toDecimalString(w.creditBalance),
    pending_credits: toDecimalString(w.pendingCredits),
    pending_debits: toDecimalString(w.pendingDebits),
    conversion_rate: toDecimalString(w.conversionRate),
    topup_conversion_rate: toDecimalString(w.topupConversionRate),
    allowed_price_types: JSON.stringify(w.allowedPriceTypes),
    description: w.description,
    metadata: JSON.stringify(w.metadata),
    auto_topup: autoTopupToRow(w.autoTopup),
    alert_settings: alertSettingsToRow(w.alertSettings),
    alert_state: w.alertState,
    ongoing_alert_state: w.ongoingAlertState,
    ledger_seq: w.ledgerSeq,
    version: w.version,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
  };
}

export interface WalletReadRow extends WalletRow {
  expiry_due: boolean;
}

/**
 * Reads and writes wallet rows. Stateless: every method takes the connection first, then
 * the Scope it reads in (a batch: a scope per wallet); a saved wallet carries its own.
 */
export class WalletStore {
  async insert(conn: Conn, wallet: Wallet): Promise<void> {
    await conn('wallets').insert(walletToRow(wallet));
  }

  async insertMany(conn: Conn, wallets: Wallet[]): Promise<void> {
    if (wallets.length === 0) return;
    await conn('wallets').insert(wallets.map(walletToRow));
  }

  /**
   * Locks the wallet row for the rest of the transaction (every balance change goes through
   * here), and tells whether credits of it have expired without their expiry debit yet.
   */
  async lock(trx: Trx, scope: Scope, id: string, now: Date): Promise<{ wallet: Wallet; expiryDue: boolean } | undefined> {
    const row = (await withUnbilled(trx('wallets as w'))
      .where({ 'w.id': id, 'w.tenant_id': scope.tenantId, 'w.environment_id': scope.environmentId })
      .forUpdate('w')
      .first('w.*', ...UNBILLED_COLUMNS, expiryDueColumn(trx, now))) as WalletReadRow | undefined;
    return row && { wallet: walletFromRow(row), expiryDue: row.expiry_due };
  }

  /**
   * Locks several wallets in one statement, in id order (as every multi-wallet lock does,
   * so that two of them never deadlock). The answer follows `targets`; undefined where the
   * wallet does not exist in the target's tenant and environment.
   */
  async lockMany(
    trx: Trx,
    targets: Array<{ scope: Scope; id: string }>,
    now: Date,
  ): Promise<Array<{ wallet: Wallet; expiryDue: boolean } | undefined>> {
    if (targets.length === 0) return [];
    // By the primary key only, whatever the planner knows of the table (a tuple IN list beside it
    // let a plan without statistics scan the tenant's wallets and unbilled rows once per wallet:
    // 0.75 s a call at 5,000 wallets). A wallet of another scope is locked but not answered.
    // One wallet (the usual case) by `=`: Postgres keeps the named statement's generic plan
    // (ADR 0052), where `= ANY` of an array it assumes to hold 10 ids is planned every time.
    const ids = [...new Set(targets.map((t) => t.id))];
    const rows = rowsOf<WalletReadRow>(
      await trx.raw(
        `SELECT w.*, u.amount AS unbilled_amount, u.as_of AS unbilled_as_of, u.invoices AS unbilled_invoices, ${EXPIRY_DUE_SQL} FROM wallets w ${UNBILLED_JOIN_SQL}
          WHERE ${ids.length === 1 ? 'w.id = ?' : 'w.id = ANY(?::text[])'} ORDER BY w.id FOR UPDATE OF w`,
        [now, ids.length === 1 ? ids[0] : ids],
      ),
    );
    const byKey = new Map(rows.map((r) => [`${r.tenant_id}\u0000${r.environment_id}\u0000${r.id}`, r]));
    return targets.map((t) => {
      const row = byKey.get(`${t.scope.tenantId}\u0000${t.scope.environmentId}\u0000${t.id}`);
      return row && { wallet: walletFromRow(row), expiryDue: row.expiry_due };
    });
  }

  /** The wallet, and whether one of its credits has expired without its expiry debit yet. */
  async find(conn: Conn, scope: Scope, id: string, now: Date): Promise<{ wallet: Wallet; expiryDue: boolean } | undefined> {
    const row = (await withUnbilled(conn('wallets as w'))
      .where({ 'w.id': id, 'w.tenant_id': scope.tenantId, 'w.environment_id': scope.environmentId })
      .first('w.*', ...UNBILLED_COLUMNS, expiryDueColumn(conn, now))) as WalletReadRow | undefined;
    return row && { wallet: walletFromRow(row), expiryDue: row.expiry_due };
  }

  async listByCustomer(
    conn: Conn,
    scope: Scope,
    customerId: string,
    page: { limit: number; offset: number },
    now: Date,
  ): Promise<{ items: Array<{ wallet: Wallet; expiryDue: boolean }>; total: number }> {
    const base = conn('wallets as w').where({
      'w.tenant_id': scope.tenantId,
      'w.environment_id': scope.environmentId,
      'w.customer_id': customerId,
    });
    const [rows, count] = await Promise.all([
      withUnbilled(base.clone())
        .orderBy([{ column: 'w.created_at', order: 'asc' }, { column: 'w.id', order: 'asc' }])
        .limit(page.limit)
        .offset(page.offset)
        .select('w.*', ...UNBILLED_COLUMNS, expiryDueColumn(conn, now)) as Promise<WalletReadRow[]>,
      base.clone().count<{ count: string | number }[]>({ count: '*' }),
    ]);
    return {
      items: rows.map((r) => ({ wallet: walletFromRow(r), expiryDue: r.expiry_due })),
      total: Number(count[0]?.count ?? 0),
    };
  }

  async openWalletIdsOfCustomer(trx: Trx, scope: Scope, customerId: string): Promise<string[]> {
    const rows = await trx('wallets')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, customer_id: customerId })
      .whereNot('wallet_status', 'closed')
      .orderBy('id')
      .select<{ id: string }[]>('id');
    return rows.map((r) => r.id);
  }

  private ofCustomer(conn: Conn, scope: Scope, w: Pick<Wallet, 'customerId' | 'currency' | 'walletType'>) {
    return conn('wallets').where({
      tenant_id: scope.tenantId,
      environment_id: scope.environmentId,
      customer_id: w.customerId,
      currency: w.currency,
      wallet_type: w.walletType,
    });
  }

  /** The open wallet of the customer with this currency and type, if there is one. */
  async existsOpen(trx: Trx, scope: Scope, w: Pick<Wallet, 'customerId' | 'currency' | 'walletType'>): Promise<string | undefined> {
    const row = await this.ofCustomer(trx, scope, w).whereNot('wallet_status', 'closed').first<{ id: string } | undefined>('id');
    return row?.id;
  }

  /**
   * `existsOpen` of a wallet type for several (customer, currency) pairs in one statement: the
   * open wallet's id by `activeWalletsKey` (the oldest, should there be several).
   */
  async openIdsOf(trx: Trx, scope: Scope, walletType: WalletType, pairs: Array<Pick<Wallet, 'customerId' | 'currency'>>): Promise<Map<string, string>> {
    const unique = [...new Map(pairs.map((p) => [activeWalletsKey(p), p])).values()];
    if (unique.length === 0) return new Map();
    // The pairs as two arrays: one text whatever their number, named and planned once (a list
    // of 100 pairs in the text took Postgres 9 ms to plan each time, for 1 ms to run).
    const rows = rowsOf<{ id: string; customer_id: string; currency: string }>(
      await trx.raw(
        `SELECT DISTINCT ON (w.customer_id, w.currency) w.id, w.customer_id, w.currency
           FROM wallets w
           JOIN unnest(?::text[], ?::text[]) AS p (customer_id, currency) ON p.customer_id = w.customer_id AND p.currency = w.currency
          WHERE w.tenant_id = ? AND w.environment_id = ? AND w.wallet_type = ? AND w.wallet_status <> 'closed'
          ORDER BY w.customer_id, w.currency, w.created_at, w.id`,
        [unique.map((p) => p.customerId), unique.map((p) => p.currency), scope.tenantId, scope.environmentId, walletType],
      ),
    );
    return new Map(rows.map((r) => [activeWalletsKey({ customerId: r.customer_id, currency: r.currency }), r.id]));
  }

  /**
   * For each (customer, currency) pair, the customer's oldest active PRE_PAID and POST_PAID
   * wallets of the currency (invoices pay from them), in one statement. The answer is keyed by
   * `activeWalletsKey`; a pair without an active wallet of a type has no id for it.
   */
  async activeIdsOf(conn: Conn, scope: Scope, pairs: Array<Pick<Wallet, 'customerId' | 'currency'>>): Promise<Map<string, ActiveWalletIds>> {
    const out = new Map<string, ActiveWalletIds>();
    const unique = [...new Map(pairs.map((p) => [activeWalletsKey(p), p])).values()];
    if (unique.length === 0) return out;
    const rows = rowsOf<{ id: string; customer_id: string; currency: string; wallet_type: WalletType }>(
      await conn.raw(
        `SELECT DISTINCT ON (w.customer_id, w.currency, w.wallet_type) w.id, w.customer_id, w.currency, w.wallet_type
           FROM wallets w
           JOIN unnest(?::text[], ?::text[]) AS p (customer_id, currency) ON p.customer_id = w.customer_id AND p.currency = w.currency
          WHERE w.tenant_id = ? AND w.environment_id = ? AND w.wallet_status = 'active'
          ORDER BY w.customer_id, w.currency, w.wallet_type, w.created_at, w.id`,
        [unique.map((p) => p.customerId), unique.map((p) => p.currency), scope.tenantId, scope.environmentId],
      ),
    );
    for (const r of rows) {
      const key = activeWalletsKey({ customerId: r.customer_id, currency: r.currency });
      const ids = out.get(key) ?? {};
      if (r.wallet_type === 'PRE_PAID') ids.prepaid = r.id;
      else ids.postpaid = r.id;
      out.set(key, ids);
    }
    return out;
  }

  /**
   * Saves what a balance change alters (status, balances, alert states, ledger position,
   * version) of several wallets in one statement.
   */
  updateLedgerMany(trx: Trx, wallets: Wallet[]): Knex.Raw {
    const values = wallets.map(() => '(?, ?, ?::numeric, ?::numeric, ?::numeric, ?, ?, ?::bigint, ?::integer, ?::timestamptz)').join(', ');
    return trx.raw(
      `UPDATE wallets w SET wallet_status = v.wallet_status, credit_balance = v.credit_balance,
              pending_credits = v.pending_credits, pending_debits = v.pending_debits, alert_state = v.alert_state,
              ongoing_alert_state = v.ongoing_alert_state, ledger_seq = v.ledger_seq,
              version = v.version, updated_at = v.updated_at
         FROM (VALUES ${values}) AS v(id, wallet_status, credit_balance, pending_credits, pending_debits, alert_state,
              ongoing_alert_state, ledger_seq, version, updated_at)
        WHERE w.id = v.id`,
      wallets.flatMap((w) => [
        w.id,
        w.walletStatus,
        toDecimalString(w.creditBalance),
        toDecimalString(w.pendingCredits),
        toDecimalString(w.pendingDebits),
        w.alertState,
        w.ongoingAlertState,
        w.ledgerSeq,
        w.version,
        w.updatedAt,
      ]),
    );
  }

  update(trx: Trx, wallet: Wallet): Knex.QueryBuilder {
    const { id: _id, tenant_id: _t, environment_id: _e, created_at: _c, ...changes } = walletToRow(wallet);
    return trx('wallets').where({ id: wallet.id }).update(changes);
  }
}

/** Whether a credit of wallet `w` has expired without its expiry debit yet (binds: now). */
const EXPIRY_DUE_SQL = `EXISTS (SELECT 1 FROM transactions t WHERE t.wallet_id = w.id AND t.type = 'CREDIT'
       AND t.transaction_status = 'COMPLETED' AND t.credits_available > 0 AND t.expiry_date IS NOT NULL
       AND t.expiry_date <= ?) AS expiry_due`;

function expiryDueColumn(conn: Knex, now: Date): Knex.Raw {
  return conn.raw(EXPIRY_DUE_SQL, [now]);
}

/** The customer's unbilled usage in the wallet's currency (ADR 0024), joined to wallet reads. */
const UNBILLED_JOIN_SQL = `LEFT JOIN unbilled_usage u ON u.tenant_id = w.tenant_id AND u.environment_id = w.environment_id
       AND u.customer_id = w.customer_id AND u.currency = w.currency`;
const UNBILLED_COLUMNS = ['u.amount as unbilled_amount', 'u.as_of as unbilled_as_of', 'u.invoices as unbilled_invoices'];

function withUnbilled(qb: Knex.QueryBuilder): Knex.QueryBuilder {
  return qb.leftJoin('unbilled_usage as u', (on) => {
    on.on('u.tenant_id', 'w.tenant_id').andOn('u.environment_id', 'w.environment_id').andOn('u.customer_id', 'w.customer_id').andOn('u.currency', 'w.currency');
  });
}
