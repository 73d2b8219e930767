export * from './currency';
export * from './pricing';
