export { createCustomerService, type CustomerServiceConfig } from './service';
export { customerEnv } from './config';
export { migrations, SCHEMA } from './migrations';
