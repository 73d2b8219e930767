import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, ValidationError, VersionConflictError } from '@billstream/errors';
import { matchesIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import { EXACT_ZERO } from '@billstream/money';
import type { EventContext } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import type { CustomerDirectory } from '../customers/directory';
import { WALLET_EVENTS } from '../events';
import { credit } from '../ledger/credit';
import type { Ledger } from '../ledger/ledger';
import { terminate } from '../ledger/terminate';
import type { EntryStore } from '../entries/store';
import type { AlertSettings, AutoTopup, PriceType, Wallet, WalletType } from './domain';
import type { WalletStore } from './store';
import { walletEtag } from './view';

export interface CreateWalletInput {
  customerId: string;
  currency: string;
  walletType: WalletType;
  conversionRate: Decimal;
  topupConversionRate: Decimal | null;
  initialCredits: Decimal | null;
  initialCreditsExpiry: Date | null;
  description: string | null;
  metadata: Record<string, string>;
  autoTopup: AutoTopup | null;
  alertSettings: AlertSettings | null;
  allowedPriceTypes: PriceType[] | null;
}

export interface UpdateWalletInput {
  autoTopup?: AutoTopup | null;
  alertSettings?: AlertSettings | null;
  description?: string | null;
  metadata?: Record<string, string>;
  walletStatus?: 'active' | 'frozen';
  ifMatch?: string;
}

export interface RequestMeta extends EventContext {
  requestId: string;
}

/** Checks that apply to alert settings wherever they come from. */
export function checkAlertSettings(s: AlertSettings | null | undefined, field = 'alert_settings'): void {
  if (!s) return;
  const levels = (['critical', 'warning', 'info'] as const).filter((l) => s[l]);
  for (let i = 1; i < levels.length; i += 1) {
    const lower = s[levels[i - 1]]!.threshold;
    const upper = s[levels[i]]!.threshold;
    if (lower.greaterThan(upper)) {
      throw new ValidationError(`${field}.${levels[i]}.threshold must not be below ${field}.${levels[i - 1]}.threshold`, {
        field: `${field}.${levels[i]}.threshold`,
      });
    }
  }
}

/** A new open wallet of the input's customer, currency and type, empty, as both creations insert it. */
export function newWallet(scope: Scope, input: Omit<CreateWalletInput, 'initialCredits' | 'initialCreditsExpiry'>, now: Date): Wallet {
  return {
    id: newId('wallet'),
    tenantId: scope.tenantId,
    environmentId: scope.environmentId,
    customerId: input.customerId,
    currency: input.currency.toLowerCase(),
    walletType: input.walletType,
    walletStatus: 'active',
    creditBalance: EXACT_ZERO,
    pendingCredits: EXACT_ZERO,
    pendingDebits: EXACT_ZERO,
    conversionRate: input.conversionRate,
    topupConversionRate: input.topupConversionRate ?? input.conversionRate,
    allowedPriceTypes: input.allowedPriceTypes ?? (input.walletType === 'PRE_PAID' ? ['USAGE'] : ['ALL']),
    description: input.description,
    metadata: input.metadata,
    autoTopup: input.autoTopup,
    alertSettings: input.alertSettings,
    alertState: 'ok',
    ongoingAlertState: 'ok',
    unbilledUsage: EXACT_ZERO,
    unbilledAsOf: null,
    unbilledInvoices: {},
    ledgerSeq: 0,
    version: 0,
    createdAt: now,
    updatedAt: now,
  };
}

export class WalletService {
  constructor(
    private readonly db: Db,
    private readonly wallets: WalletStore,
    private readonly entries: EntryStore,
    private readonly customers: CustomerDirectory,
    private readonly ledger: Ledger,
  ) {}

  async create(meta: RequestMeta, input: CreateWalletInput): Promise<Wallet> {
    const now = this.ledger.clock();
    if (input.initialCreditsExpiry && !input.initialCredits) {
      throw new ValidationError('initial_credits_expiry_date_utc needs initial_credits_to_load', {
        field: 'initial_credits_expiry_date_utc',
      });
    }
    if (input.initialCreditsExpiry && input.initialCreditsExpiry <= now) {
      throw new ValidationError('initial_credits_expiry_date_utc must be in the future', { field: 'initial_credits_expiry_date_utc' });
    }
    checkAlertSettings(input.alertSettings);
    await this.customers.ensureExists(meta, input.customerId, meta.requestId);
    const wallet = newWallet(meta, input, now);
    const out = await this.ledger.transaction(async (trx) => {
      await this.customers.lockExisting(trx, meta, input.customerId);
      const existing = await this.wallets.existsOpen(trx, meta, wallet);
      if (existing) {
        throw new AlreadyExistsError('The customer already has an open wallet of this currency and type', {
          field: 'currency',
          wallet_id: existing,
        });
      }
      return this.ledger.createIn(trx, meta, wallet, async (change) => {
        change.announceWallet(WALLET_EVENTS.created);
        if (input.initialCredits) {
          credit(change, {
            credits: input.initialCredits,
            reason: 'FREE_CREDIT_GRANT',
            pending: false,
            expiryDate: input.initialCreditsExpiry,
            priority: null,
            description: 'Initial credits',
            idempotencyKey: null,
            requestHash: null,
          });
        }
      });
    });
    return out.wallet;
  }

  /** The wallet, with credits whose expiry has passed written off first. */
  async get(ctx: EventContext, id: string): Promise<Wallet> {
    const found = await this.wallets.find(this.db, ctx, id, this.ledger.clock());
    if (!found) throw new NotFoundError(`Wallet ${id} not found`, { wallet_id: id });
    if (!found.expiryDue) return found.wallet;
    return (await this.ledger.change(ctx, id, async () => undefined)).wallet;
  }

  async balance(ctx: EventContext, id: string): Promise<{ wallet: Wallet; breakdown: { free: Decimal; purchased: Decimal } }> {
    const wallet = await this.get(ctx, id);
    const breakdown = await this.entries.breakdown(this.db, ctx, wallet.id, this.ledger.clock());
    return { wallet, breakdown };
  }

  async listByCustomer(meta: RequestMeta, customerId: string, page: { limit: number; offset: number }): Promise<{ items: Wallet[]; total: number }> {
    const { items, total } = await this.wallets.listByCustomer(this.db, meta, customerId, page, this.ledger.clock());
    if (total === 0) await this.customers.ensureExists(meta, customerId, meta.requestId);
    const wallets: Wallet[] = [];
    for (const item of items) wallets.push(item.expiryDue ? await this.get(meta, item.wallet.id) : item.wallet);
    return { items: wallets, total };
  }

  async update(ctx: EventContext, id: string, input: UpdateWalletInput): Promise<Wallet> {
    checkAlertSettings(input.alertSettings);
    const { wallet } = await this.ledger.change(ctx, id, async (change) => {
      const w = change.wallet;
      if (!matchesIfMatch(input.ifMatch, walletEtag(w))) {
        throw new VersionConflictError('The wallet was modified since it was read; read it again', { etag: walletEtag(w) });
      }
      if (w.walletStatus === 'closed') {
        throw new ValidationError('The wallet is closed and cannot be changed', { field: 'wallet_status', wallet_status: 'closed' });
      }
      if (input.autoTopup !== undefined) w.autoTopup = input.autoTopup;
      if (input.alertSettings !== undefined) w.alertSettings = input.alertSettings;
      if (input.description !== undefined) w.description = input.description;
      if (input.metadata !== undefined) w.metadata = input.metadata;
      if (input.walletStatus !== undefined) w.walletStatus = input.walletStatus;
      change.announceWallet(WALLET_EVENTS.updated);
    });
    return wallet;
  }

  async terminate(ctx: EventContext, id: string): Promise<Wallet> {
    const { wallet } = await this.ledger.change(ctx, id, async (change) => {
      await terminate(change);
      change.announceWallet(WALLET_EVENTS.terminated);
    });
    return wallet;
  }
}
