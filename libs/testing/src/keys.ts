import { randomBytes } from 'node:crypto';

/** A fresh API key in the format the gateway issues. */
export function randomKey(): string {
  return `bsk_test_${randomBytes(18).toString('base64url')}`;
}
