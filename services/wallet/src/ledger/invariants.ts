import type { Db } from '@billstream/db';
import { Exact } from '@billstream/money';

interface Row {
  id: string;
  type: 'CREDIT' | 'DEBIT';
  transaction_status: string;
  credit_amount: string;
  amount: string;
  credit_balance_before: string;
  credit_balance_after: string;
  credits_available: string;
  expiry_date: Date | null;
  ledger_seq: number | null;
}

/**
 * Checks that a wallet's ledger adds up, and throws naming the first rule broken:
 * completed credits minus completed debits equal credit_balance; every completed movement
 * goes from its before to its after by its amount, in an unbroken chain; the credits left
 * on credit entries sum to credit_balance (and, once expiry ran, to the usable credits);
 * pending credits and pending debits match the wallet's two pending totals; amounts are credits x rate.
 */
export async function assertLedgerAddsUp(db: Db, walletId: string, now: Date): Promise<void> {
  const wallet = await db('wallets').where({ id: walletId }).first();
  const rows: Row[] = await db('transactions').where({ wallet_id: walletId }).orderBy('id');
  const balance = new Exact(wallet.credit_balance);
  const fail = (rule: string) => {
    throw new Error(`ledger of ${walletId}: ${rule}\nwallet=${JSON.stringify(wallet)}\nrows=${JSON.stringify(rows, null, 1)}`);
  };
  const completed = rows.filter((r) => r.transaction_status === 'COMPLETED');
  const credits = completed.filter((r) => r.type === 'CREDIT').reduce((s, r) => s.plus(r.credit_amount), new Exact(0));
  const debits = completed.filter((r) => r.type === 'DEBIT').reduce((s, r) => s.plus(r.credit_amount), new Exact(0));
  if (!credits.minus(debits).equals(balance)) fail(`credits ${credits} - debits ${debits} != credit_balance ${balance}`);
  if (balance.isNegative()) fail('negative credit_balance');

  const chain = [...completed].sort((a, b) => Number(a.ledger_seq) - Number(b.ledger_seq));
  let previous = new Exact(0);
  chain.forEach((r, i) => {
    if (Number(r.ledger_seq) !== i + 1) fail(`ledger_seq ${r.ledger_seq} of ${r.id} should be ${i + 1}`);
    const before = new Exact(r.credit_balance_before);
    const after = new Exact(r.credit_balance_after);
    if (!before.equals(previous)) fail(`${r.id} starts at ${before}, the previous movement ended at ${previous}`);
    const signed = r.type === 'CREDIT' ? new Exact(r.credit_amount) : new Exact(r.credit_amount).negated();
    if (!before.plus(signed).equals(after)) fail(`${r.id}: ${before} + ${signed} != ${after}`);
    previous = after;
  });
  if (!previous.equals(balance)) fail(`the chain ends at ${previous}, not at credit_balance ${balance}`);
  if (Number(wallet.ledger_seq) !== chain.length) fail(`wallet.ledger_seq ${wallet.ledger_seq} != ${chain.length} movements`);

  const creditRows = rows.filter((r) => r.type === 'CREDIT');
  for (const r of creditRows) {
    const left = new Exact(r.credits_available);
    if (left.isNegative() || left.greaterThan(r.credit_amount)) fail(`${r.id} has credits_available ${left} outside 0..${r.credit_amount}`);
    if (r.transaction_status !== 'COMPLETED' && !left.isZero()) fail(`${r.id} is ${r.transaction_status} but has credits_available`);
  }
  const left = creditRows.reduce((s, r) => s.plus(r.credits_available), new Exact(0));
  if (!left.equals(balance)) fail(`credits_available sum ${left} != credit_balance ${balance}`);
  const expiredLeft = creditRows
    .filter((r) => r.expiry_date && new Date(r.expiry_date) <= now)
    .reduce((s, r) => s.plus(r.credits_available), new Exact(0));
  const usable = left.minus(expiredLeft);
  if (expiredLeft.isZero() && !usable.equals(balance)) fail(`usable credits ${usable} != credit_balance ${balance}`);

  const pending = (type: Row['type']) =>
    rows.filter((r) => r.transaction_status === 'PENDING' && r.type === type).reduce((s, r) => s.plus(r.credit_amount), new Exact(0));
  if (!pending('CREDIT').equals(wallet.pending_credits)) fail(`pending credits ${pending('CREDIT')} != wallet.pending_credits ${wallet.pending_credits}`);
  if (!pending('DEBIT').equals(wallet.pending_debits)) fail(`pending debits ${pending('DEBIT')} != wallet.pending_debits ${wallet.pending_debits}`);

  for (const r of rows) {
    const rate = r.type === 'CREDIT' ? wallet.topup_conversion_rate : wallet.conversion_rate;
    if (!new Exact(r.credit_amount).times(rate).equals(r.amount)) fail(`${r.id}: amount ${r.amount} != ${r.credit_amount} x ${rate}`);
  }
}
