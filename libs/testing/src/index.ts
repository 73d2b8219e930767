export * from './database';
export * from './kafka';
export * from './wait';
export * from './logger';
export * from './keys';
export * from './net';
export * from './http';
export * from './receiver';
