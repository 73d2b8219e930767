export * from './service';
export * from './run-service';
export * from './service-app';
export * from './failpoints';
export * from './observability';
export * from './repeating';
