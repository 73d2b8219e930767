import type { Migration } from '@billstream/db';
import { consumerDeadLettersMigration, outboxMigration } from '@billstream/outbox';
import { billingMigration } from './001-billing';
import { invoicesMigration } from './002-invoices';
import { topupSettlementMigration } from './003-topup-settlement';
import { invoiceCountsMigration } from './004-invoice-counts';
import { tasksMigration } from './005-tasks';
import { entitlementsMigration } from './006-entitlements';
import { unbilledUsageMigration } from './007-unbilled-usage';
import { resourceVersionsMigration } from './008-resource-versions';
import { lineProrationFactorMigration } from './009-line-proration-factor';
import { invoiceArithmeticMigration } from './010-invoice-arithmetic';
import { creditGrantsMigration } from './011-credit-grants';
import { couponsMigration } from './012-coupons';
import { creditNotesMigration } from './013-credit-notes';
import { commitmentsMigration } from './014-commitments';
import { planChangesMigration } from './015-plan-changes';
import { paymentLifecycleMigration } from './016-payment-lifecycle';
import { invoiceDocumentsMigration } from './017-invoice-documents';
import { usageThresholdsMigration } from './018-usage-thresholds';
import { hierarchyBillingMigration } from './019-hierarchy-billing';
import { thresholdReturnsMigration } from './020-threshold-returns';
import { discountPeriodAmountsMigration } from './021-discount-period-amounts';
import { documentLinksMigration } from './022-document-links';
import { taxRatesMigration } from './023-tax-rates';
import { invoiceEmailsMigration } from './024-invoice-emails';
import { taxFieldsMigration } from './025-tax-fields';
import { invoiceTaxesMigration } from './026-invoice-taxes';
import { taxStatusMigration } from './027-tax-status';

export const SCHEMA = 'billing';

export const migrations: Migration[] = [
  outboxMigration(SCHEMA),
  billingMigration(SCHEMA),
  invoicesMigration(SCHEMA),
  topupSettlementMigration(SCHEMA),
  invoiceCountsMigration(SCHEMA),
  tasksMigration(SCHEMA),
  entitlementsMigration(SCHEMA),
  unbilledUsageMigration(SCHEMA),
  resourceVersionsMigration(SCHEMA),
  lineProrationFactorMigration(SCHEMA),
  invoiceArithmeticMigration(SCHEMA),
  creditGrantsMigration(SCHEMA),
  couponsMigration(SCHEMA),
  creditNotesMigration(SCHEMA),
  commitmentsMigration(SCHEMA),
  planChangesMigration(SCHEMA),
  paymentLifecycleMigration(SCHEMA),
  invoiceDocumentsMigration(SCHEMA),
  usageThresholdsMigration(SCHEMA),
  hierarchyBillingMigration(SCHEMA),
  thresholdReturnsMigration(SCHEMA),
  discountPeriodAmountsMigration(SCHEMA),
  consumerDeadLettersMigration(SCHEMA),
  documentLinksMigration(SCHEMA),
  taxRatesMigration(SCHEMA),
  invoiceEmailsMigration(SCHEMA),
  taxFieldsMigration(SCHEMA),
  invoiceTaxesMigration(SCHEMA),
  taxStatusMigration(SCHEMA),
];
