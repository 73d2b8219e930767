export { createCustomerService, type CustomerServiceConfig } from './service';
export { migrations, SCHEMA } from './migrations';
