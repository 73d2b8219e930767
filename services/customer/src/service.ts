import { migrate, pingDb } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { mountCustomerRoutes } from './customers/routes';
import { CustomerService } from './customers/service';
import { CustomerStore } from './customers/store';
import { HttpPayerCheck } from './customers/payers';
import { HttpTaxRateCheck } from './customers/tax-rates';
import { migrations, SCHEMA } from './migrations';

export interface CustomerServiceConfig {
  internalToken: string;
  /** Billing's base URL: a customer that pays live subscriptions of others is not deleted (ADR 0047). Absent: no billing to ask. */
  billingServiceUrl?: () => string | undefined;
}

export function createCustomerService({ db, bus, logger }: ServiceDeps, config: CustomerServiceConfig): Service {
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const payers = config.billingServiceUrl && new HttpPayerCheck(config.billingServiceUrl, config.internalToken);
  const taxRates = config.billingServiceUrl && new HttpTaxRateCheck(config.billingServiceUrl, config.internalToken);
  const customers = new CustomerService(db, new CustomerStore(), () => relay.nudge(), payers, taxRates || undefined);
  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    service: 'customer',
    logger,
    internalToken: config.internalToken,
    ready,
    mount: (a) => mountCustomerRoutes(a, customers, logger),
    // The most read route without express (ADR 0027): its handler uses only its validated input.
    lean: ['getCustomer'],
  });
  return {
    name: 'customer',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    async start() {
      await migrate(db, SCHEMA, migrations);
      relay.start();
    },
    async stop() {
      await relay.stop();
      await payers?.close();
      if (taxRates) await taxRates.close();
    },
  };
}
