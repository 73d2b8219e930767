export * from './common';
export * from './domain-event';
export * from './routes';
export * from './registry';
