import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Scope } from '@billstream/contracts';

const DAY_MS = 86_400_000;
/** `{expiry, unix seconds}.{generation}.{HMAC-SHA256, base64url}` (ADR 0059). */
const TOKEN = /^(\d{1,12})\.(\d{1,9})\.([A-Za-z0-9_-]{43})$/;

export interface LinkSet {
  hostedInvoiceUrl: string;
  invoicePdfUrl: string;
  expiresAt: Date;
}

/** What a token says once its HMAC is the invoice's: the generation it was signed with and its expiry. */
export interface VerifiedToken {
  generation: number;
  expiresAt: Date;
}

/**
 * The key of the signed links (ADR 0059): DOCUMENT_LINK_SECRET (`npm start` keeps a random one in
 * DATA_DIR when it is unset), or else derived (HKDF-SHA256) from the process's INTERNAL_TOKEN,
 * a secret the operator sets; never a key kept in the database next to the documents.
 */
export function documentLinkKey(secret: string | undefined, internalToken: string): Buffer {
  if (secret) return Buffer.from(secret, 'utf8');
  return Buffer.from(hkdfSync('sha256', internalToken, 'billstream', 'invoice-document-links:v2', 32));
}

/**
 * The signed links of invoice documents (ADR 0045, ADR 0059): `?token=` carries the link's expiry
 * and the invoice's link generation, with the HMAC-SHA256 of both, the invoice id, tenant and
 * environment. A link lasts until the later of the due date and the time it is made, plus
 * `ttlDays`; revoking an invoice's links raises its generation.
 */
export class DocumentLinks {
  constructor(
    /** The gateway's public address, without a trailing slash (PUBLIC_BASE_URL). */
    private readonly baseUrl: string,
    private readonly key: Buffer,
    /** DOCUMENT_LINK_TTL_DAYS_AFTER_DUE. */
    private readonly ttlDays: number,
  ) {}

  /** When a link made at `now` for an invoice due at `dueDate` expires (whole seconds). */
  expiryOf(dueDate: Date | null, now: Date): Date {
    const from = Math.max(dueDate?.getTime() ?? 0, now.getTime());
    return new Date(Math.ceil((from + this.ttlDays * DAY_MS) / 1000) * 1000);
  }

  /** `hosted_invoice_url` and `invoice_pdf_url` of an invoice, signed with `generation`, valid until `expiresAt`. */
  urls(i: Scope & { id: string }, generation: number, expiresAt: Date): LinkSet {
    const token = this.token(i.id, i, generation, expiresAt);
    const base = `${this.baseUrl}/v1/hosted/invoices/${encodeURIComponent(i.id)}`;
    return { hostedInvoiceUrl: `${base}?token=${token}`, invoicePdfUrl: `${base}/pdf?token=${token}`, expiresAt };
  }

  token(invoiceId: string, scope: Scope, generation: number, expiresAt: Date): string {
    const exp = Math.floor(expiresAt.getTime() / 1000);
    return `${exp}.${generation}.${this.mac(invoiceId, scope, generation, exp)}`;
  }

  /** The token's generation and expiry when it was signed for this invoice of this tenant and environment (constant time); else undefined. */
  verify(invoiceId: string, scope: Scope, given: string): VerifiedToken | undefined {
    const m = TOKEN.exec(given);
    if (!m) return undefined;
    const exp = Number(m[1]);
    const generation = Number(m[2]);
    const expected = Buffer.from(this.mac(invoiceId, scope, generation, exp));
    const actual = Buffer.from(m[3]!);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    return { generation, expiresAt: new Date(exp * 1000) };
  }

  /** What a link URL this made for the invoice says (undefined: not a valid link of it, an older format's included). */
  verifyUrl(invoiceId: string, scope: Scope, url: string | null): VerifiedToken | undefined {
    const token = url && URL.canParse(url) ? new URL(url).searchParams.get('token') : null;
    return token ? this.verify(invoiceId, scope, token) : undefined;
  }

  private mac(invoiceId: string, scope: Scope, generation: number, exp: number): string {
    return createHmac('sha256', this.key).update(`invoice-document:v2\n${invoiceId}\n${scope.tenantId}\n${scope.environmentId}\n${generation}\n${exp}`).digest('base64url');
  }
}
