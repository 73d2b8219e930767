import { TOPICS } from '@billstream/bus';
import type { DomainEvent } from '@billstream/contracts';
import type { Knex, Trx } from '@billstream/db';
import { outboxInsertMany } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import { WALLET_EVENTS } from '../events';
import type { LedgerEntry } from '../entries/domain';
import type { Wallet } from '../wallets/domain';
import { updateAlertStates } from './alert-states';
import type { ChangeDeps, WalletChange } from './change';
import { runTogether } from './statements';

/** The writes of a change, as data. */
export interface ChangeParts {
  walletId: string;
  inserts: LedgerEntry[];
  creditsLeft: Array<{ id: string; creditsAvailable: Decimal }>;
  /** The wallet when its row changed. */
  wallet: Wallet | null;
  events: DomainEvent[];
}

/**
 * The statements that save changes (of one wallet or several): one insert of entry
 * rows, one update of credits left, one update of wallet rows, one outbox insert.
 */
export function writesOf(trx: Trx, deps: ChangeDeps, parts: ChangeParts[], now: Date): Array<Knex.QueryBuilder | Knex.Raw> {
  const writes: Array<Knex.QueryBuilder | Knex.Raw> = [];
  const inserts = parts.flatMap((p) => p.inserts);
  if (inserts.length > 0) writes.push(deps.entries.insertMany(trx, inserts));
  const creditsLeft = parts.flatMap((p) => p.creditsLeft);
  if (creditsLeft.length > 0) writes.push(deps.entries.setCreditsAvailable(trx, creditsLeft, now));
  const wallets = parts.flatMap((p) => (p.wallet ? [p.wallet] : []));
  if (wallets.length === 1) writes.push(deps.wallets.update(trx, wallets[0]));
  else if (wallets.length > 1) writes.push(deps.wallets.updateLedgerMany(trx, wallets));
  const events = parts.flatMap((p) => p.events.map((event) => ({ key: p.walletId, event })));
  if (events.length > 0) writes.push(outboxInsertMany(trx, TOPICS.walletEvents, events));
  return writes;
}

/** Takes the buffered entry rows and credits left out of the change. */
function takeRows(change: WalletChange): ChangeParts {
  const parts: ChangeParts = {
    walletId: change.wallet.id,
    inserts: change.inserts.splice(0),
    creditsLeft: [...change.creditsLeft].map(([id, creditsAvailable]) => ({ id, creditsAvailable })),
    wallet: null,
    events: [],
  };
  change.creditsLeft.clear();
  return parts;
}

/** Sends the buffered rows to the database (before reading what they change). */
export async function flush(change: WalletChange): Promise<void> {
  await runTogether(change.trx, writesOf(change.trx, change.deps, [takeRows(change)], change.now));
}

/**
 * What finishing the change writes, as data (so that the changes of several wallets are
 * saved together): alert states first, then the rows, the wallet if it changed, the events.
 */
export function finishParts(change: WalletChange): ChangeParts {
  const { wallet } = change;
  if (wallet.walletStatus !== 'closed') updateAlertStates(change);
  const parts = takeRows(change);
  if (change.dirty) {
    wallet.version += 1;
    wallet.updatedAt = change.now;
    parts.wallet = wallet;
  }
  const leading = change.walletEvents.filter((t) => t === WALLET_EVENTS.created).map((t) => change.walletEvent(t));
  const trailing = change.walletEvents.filter((t) => t !== WALLET_EVENTS.created).map((t) => change.walletEvent(t));
  parts.events = [...leading, ...change.events, ...trailing];
  return parts;
}

/** Saves everything the change wrote in one statement; returns its events. */
export async function finish(change: WalletChange): Promise<DomainEvent[]> {
  const parts = finishParts(change);
  await runTogether(change.trx, writesOf(change.trx, change.deps, [parts], change.now));
  return parts.events;
}
