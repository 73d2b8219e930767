import { portalEmailLinkKey, portalEmailLinkUrl, signPortalEmailLink, verifyPortalEmailLink } from './portal-email-link';

describe('the portal link of an invoice email', () => {
  const key = portalEmailLinkKey('x'.repeat(48));
  const claims = { tenantId: 'tenant-a', environmentId: 'production', customerId: 'cust_01', expiresAt: 2_000_000 };

  it('verifies what it signed, until its expiry', () => {
    const token = signPortalEmailLink(key, claims);
    expect(verifyPortalEmailLink(key, token, 1_999_999)).toEqual(claims);
    expect(verifyPortalEmailLink(key, token, 2_000_000)).toBe('expired');
    expect(portalEmailLinkUrl('https://billing.example.com/', token)).toBe(`https://billing.example.com/portal/#email=${token}`);
  });

  it('refuses another key, a changed payload or MAC, and junk', () => {
    const token = signPortalEmailLink(key, claims);
    const [payload, mac] = token.split('.') as [string, string];
    const other = signPortalEmailLink(key, { ...claims, customerId: 'cust_02' }).split('.')[0]!;
    expect(verifyPortalEmailLink(portalEmailLinkKey('y'.repeat(48)), token, 0)).toBeUndefined();
    expect(verifyPortalEmailLink(key, `${other}.${mac}`, 0)).toBeUndefined();
    expect(verifyPortalEmailLink(key, `${payload}.${mac.slice(0, -1)}A`, 0)).toBeUndefined();
    for (const junk of ['', '.', 'a.b.c', payload, `${token}.x`, 'x'.repeat(3000)]) expect(verifyPortalEmailLink(key, junk, 0)).toBeUndefined();
  });
});
