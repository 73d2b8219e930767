import { runServiceProcess } from '@billstream/runtime';
import { billingEnv, durationMs } from './config';
import { createBillingService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'billing',
  schema: SCHEMA,
  defaultPort: 8085,
  env: billingEnv,
  create: (deps, config) =>
    createBillingService(deps, {
      internalToken: config.INTERNAL_TOKEN,
      customerServiceUrl: config.CUSTOMER_SERVICE_URL,
      ingestionServiceUrl: config.INGESTION_SERVICE_URL,
      walletServiceUrl: config.WALLET_SERVICE_URL,
      settings: {
        intervalMs: config.BILLING_INTERVAL_MS,
        leaseMs: config.BILLING_CLAIM_LEASE_MS,
        renewalNoticeDays: config.SUBSCRIPTION_RENEWAL_NOTICE_DAYS,
        finalizeDelayMs: durationMs(config.BILLING_FINALIZE_DELAY),
        invoiceNumberPrefix: config.INVOICE_NUMBER_PREFIX,
        concurrency: config.BILLING_JOB_CONCURRENCY,
        tasksPollMs: config.TASKS_POLL_MS,
        tasksLeaseMs: config.TASKS_LEASE_MS,
        tasksBatchRows: config.TASKS_BATCH_ROWS,
      },
    }),
});
