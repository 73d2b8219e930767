export * from './database';
export * from './kafka';
export * from './wait';
export * from './logger';
export * from './stack';
export * from './http';
export * from './receiver';
