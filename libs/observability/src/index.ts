export * from './registry';
export * from './instruments';
export * from './metrics-server';
export * from './tracing';
export * from './held-transaction';
