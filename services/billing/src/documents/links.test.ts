import { DocumentLinks, documentLinkKey } from './links';

const scope = { tenantId: 't1', environmentId: 'production' };
const DAY_MS = 86_400_000;

describe('signed document links (ADR 0059)', () => {
  const links = new DocumentLinks('https://billing.example.com', documentLinkKey(undefined, 'i'.repeat(48)), 30);

  it('expire 30 days after the due date, or after the time they are made when that is later (whole seconds)', () => {
    const due = new Date('2026-12-31T10:00:00.250Z');
    expect(links.expiryOf(due, new Date('2026-12-01T00:00:00Z')).toISOString()).toBe('2027-01-30T10:00:01.000Z');
    expect(links.expiryOf(due, new Date('2027-03-01T00:00:00Z')).toISOString()).toBe('2027-03-31T00:00:00.000Z');
    expect(links.expiryOf(null, new Date('2027-03-01T00:00:00Z')).getTime()).toBe(new Date('2027-03-01T00:00:00Z').getTime() + 30 * DAY_MS);
  });

  it('verify only for the invoice, tenant and environment they were signed for, with their generation and expiry', () => {
    const exp = new Date('2027-01-30T10:00:00Z');
    const { hostedInvoiceUrl, invoicePdfUrl } = links.urls({ id: 'inv_1', ...scope }, 2, exp);
    expect(hostedInvoiceUrl).toMatch(/^https:\/\/billing\.example\.com\/v1\/hosted\/invoices\/inv_1\?token=\d+\.2\.[A-Za-z0-9_-]{43}$/);
    expect(invoicePdfUrl).toBe(hostedInvoiceUrl.replace('?token', '/pdf?token'));
    const token = new URL(hostedInvoiceUrl).searchParams.get('token')!;
    expect(links.verify('inv_1', scope, token)).toEqual({ generation: 2, expiresAt: exp });
    expect(links.verifyUrl('inv_1', scope, invoicePdfUrl)).toEqual({ generation: 2, expiresAt: exp });
    expect(links.verify('inv_2', scope, token)).toBeUndefined();
    expect(links.verify('inv_1', { ...scope, tenantId: 't2' }, token)).toBeUndefined();
    // A later expiry or an older generation put in the token breaks its HMAC.
    const [e, , mac] = token.split('.');
    expect(links.verify('inv_1', scope, `${Number(e) + 86_400}.2.${mac}`)).toBeUndefined();
    expect(links.verify('inv_1', scope, `${e}.3.${mac}`)).toBeUndefined();
    for (const bad of ['', 'A'.repeat(43), `${e}.2`, `x.2.${mac}`, null]) expect(links.verifyUrl('inv_1', scope, bad === null ? null : `https://x/v1/hosted/invoices/inv_1?token=${bad}`)).toBeUndefined();
  });

  it('take DOCUMENT_LINK_SECRET as the key, else one derived from the internal token (never the token itself)', () => {
    const exp = new Date('2027-01-30T10:00:00Z');
    const tokenWith = (key: Buffer) => new DocumentLinks('https://b', key, 30).token('inv_1', scope, 0, exp);
    const internal = 'i'.repeat(48);
    expect(documentLinkKey('s'.repeat(32), internal)).toEqual(Buffer.from('s'.repeat(32)));
    expect(documentLinkKey(undefined, internal)).toEqual(documentLinkKey(undefined, internal));
    expect(documentLinkKey(undefined, internal)).not.toEqual(Buffer.from(internal));
    expect(tokenWith(documentLinkKey(undefined, internal))).not.toBe(tokenWith(documentLinkKey(undefined, 'j'.repeat(48))));
    expect(tokenWith(documentLinkKey(undefined, internal))).not.toBe(tokenWith(Buffer.from(internal)));
  });
});
