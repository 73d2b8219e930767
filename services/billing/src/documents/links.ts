import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';

/**
 * The signed links of invoice documents (ADR 0045): `?token=` is the HMAC-SHA256 (base64url)
 * of the invoice id, tenant and environment under one key: DOCUMENT_LINK_SECRET, or else a
 * random key made once and kept in `document_link_keys` (every replica reads the same one).
 */
export class DocumentLinks {
  private key?: Promise<Buffer>;

  constructor(
    private readonly db: Db,
    /** The gateway's public address, without a trailing slash (PUBLIC_BASE_URL). */
    private readonly baseUrl: string,
    private readonly secret: string | undefined,
    private readonly clock: () => Date,
  ) {}

  /** `hosted_invoice_url` and `invoice_pdf_url` of an invoice. */
  async urls(i: Scope & { id: string }): Promise<{ hostedInvoiceUrl: string; invoicePdfUrl: string }> {
    const token = await this.token(i.id, i);
    const base = `${this.baseUrl}/v1/hosted/invoices/${encodeURIComponent(i.id)}`;
    return { hostedInvoiceUrl: `${base}?token=${token}`, invoicePdfUrl: `${base}/pdf?token=${token}` };
  }

  async token(invoiceId: string, scope: Scope): Promise<string> {
    const mac = createHmac('sha256', await this.keyOf());
    mac.update(`invoice-document:v1\n${invoiceId}\n${scope.tenantId}\n${scope.environmentId}`);
    return mac.digest('base64url');
  }

  /** Whether `given` is the token of this invoice of this tenant and environment (constant time). */
  async valid(invoiceId: string, scope: Scope, given: string): Promise<boolean> {
    const expected = Buffer.from(await this.token(invoiceId, scope));
    const actual = Buffer.from(given);
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }

  /**
   * Reads (or makes) the key; the service's start calls it, before any finalization needs the
   * key inside its transaction (the embedded database has one session: a read of its own there
   * would wait for the transaction that waits for it).
   */
  async ready(): Promise<void> {
    await this.keyOf();
  }

  private keyOf(): Promise<Buffer> {
    if (this.secret) return Promise.resolve(Buffer.from(this.secret, 'utf8'));
    this.key ??= this.loadKey().catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  /** Its own statements on the pool (never a caller's transaction, which may roll back). */
  private async loadKey(): Promise<Buffer> {
    await this.db('document_link_keys').insert({ id: 1, secret: randomBytes(32).toString('hex'), created_at: this.clock() }).onConflict('id').ignore();
    const row = (await this.db('document_link_keys').where({ id: 1 }).first()) as { secret: string };
    return Buffer.from(row.secret, 'hex');
  }
}
