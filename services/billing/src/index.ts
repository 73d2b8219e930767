export * from './currency';
export * from './periods';
export * from './pricing';
