import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'bsk_';

/** A new secret key: a recognisable prefix and 256 random bits. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Keys are stored only as SHA-256 hashes. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** What may be shown of a key after creation: its first characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}
