const { slug, OUTSIDE, check } = require('./check-citations');

describe('check-citations', () => {
  it('refuses citations of the spec files outside the repository, not the code folder named shared', () => {
    for (const cited of ['(BILLING.md, Invoices)', 'BILLING-2.md section 3', 'BILLING-3.md', 'CONTRACT.md', 'ARCHITECTURE.md rule 9', '../shared/BILLING.md', '../../shared/spec/000_x.txt', '/work/shared/x']) {
      expect(OUTSIDE.test(cited)).toBe(true);
    }
    for (const fine of ["import { Coalescer } from '../shared/coalescer';", 'docs/api/coupons.md', 'BILLING_FINALIZE_DELAY']) {
      expect(OUTSIDE.test(fine)).toBe(false);
    }
  });

  it("makes GitHub's heading anchors", () => {
    expect(slug('`POST /v1/entitlements/check`')).toBe('post-v1entitlementscheck');
    expect(slug('Lists with `include_children`')).toBe('lists-with-include_children');
    expect(slug('Ownership, ids and permissions')).toBe('ownership-ids-and-permissions');
  });

  it('finds no outside citation and no broken markdown link in the repository', () => {
    expect(check()).toEqual([]);
  });
});
