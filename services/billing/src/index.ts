export * from './currency';
export * from './periods';
export * from './plans';
export * from './prices';
export * from './pricing';
