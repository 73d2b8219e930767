import { clean, inScope, remainingOf } from './views';
import { generatePortalToken, hashPortalToken, PORTAL_SESSION_ID, portalUrl } from './service';
import { portalCsp } from './page';

describe('portal views', () => {
  it('keeps a record only when its customer is in the session tree', () => {
    const ids = new Set(['cust_a', 'cust_a1']);
    expect(inScope(ids, { customer_id: 'cust_a1' })).toBe(true);
    expect(inScope(ids, { customer_id: 'cust_b' })).toBe(false);
    expect(inScope(ids, {})).toBe(false);
    expect(inScope(ids, { customer_id: ['cust_a'] })).toBe(false);
  });

  it('drops the seller-side fields', () => {
    expect(clean({ id: 'inv_1', tenant_id: 't', environment_id: 'e', metadata: { k: 'v' }, available_actions: ['void'], total: 4900 })).toEqual({ id: 'inv_1', total: 4900 });
  });

  it('what remains: limit less usage, exact, never below 0, null without a limit', () => {
    expect(remainingOf('100', '12.5')).toBe('87.5');
    expect(remainingOf('0.3', '0.1')).toBe('0.2');
    expect(remainingOf('10', '12')).toBe('0');
    expect(remainingOf(null, '1')).toBeNull();
    expect(remainingOf('10', null)).toBeNull();
  });
});

describe('portal tokens and page policy', () => {
  it('a bsp_ token of 256 bits, stored as SHA-256 hex, in the fragment of the URL; the session id in its path', () => {
    const token = generatePortalToken();
    expect(token).toMatch(/^bsp_[A-Za-z0-9_-]{43}$/);
    expect(hashPortalToken(token)).toMatch(/^[0-9a-f]{64}$/);
    const id = 'psess_01JH0000000000000000000000';
    expect(portalUrl('https://billing.example.com/', id, token)).toBe(`https://billing.example.com/portal/s/${id}#token=${token}`);
    expect(PORTAL_SESSION_ID.test(id)).toBe(true);
    for (const bad of ['psess_x', `${id}/..`, 'psess_01jh0000000000000000000000', `k${id}`]) expect(PORTAL_SESSION_ID.test(bad)).toBe(false);
  });

  it("frames nowhere by default, only where allowed otherwise; no inline script ever", () => {
    expect(portalCsp([])).toContain("frame-ancestors 'none'");
    expect(portalCsp(['https://app.example.com'])).toContain('frame-ancestors https://app.example.com');
    expect(portalCsp([])).toContain("script-src 'self';");
    expect(portalCsp([])).not.toContain('unsafe');
  });
});
