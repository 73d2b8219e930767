export * from './context';
export * from './errors';
export * from './app';
export * from './validation';
export * from './routes';
export * from './etag';
export * from './server';
