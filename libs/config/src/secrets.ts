import { z } from 'zod';

/** The shortest INTERNAL_TOKEN a service accepts (ADR 0034): 32 characters, e.g. 24 random bytes in base64. */
export const INTERNAL_TOKEN_MIN_LENGTH = 32;

/**
 * Values of secrets that appear in this repository, today or in an earlier version: examples,
 * placeholders and old development defaults. Anyone can read them, so a service refuses them
 * (ADR 0034). deploy/k8s/secrets.yaml ships the last two on purpose: applied as they are, the
 * pods stop at start with a message instead of running on a published secret.
 */
export const KNOWN_PLACEHOLDER_SECRETS: readonly string[] = [
  'compose-internal-token-change-me',
  'replace-with-at-least-32-random-characters',
  'bsk_compose_local_development_key',
  'bsk_replace_with_a_long_random_key_or_delete_this_secret',
  'REPLACE-ME-not-a-secret-create-it-with-random-values-see-deploy-k8s-README',
  'bsk_REPLACE-ME-not-a-key-create-it-with-random-values-see-deploy-k8s-README',
];

/** Words no generated secret contains and every placeholder does. */
const PLACEHOLDER_WORDS = /change[-_ ]?me|replace[-_ ]?(me|with)|placeholder|not[-_ ]a[-_ ](secret|key)|example/i;

/** True for a value known from the repository or written as a placeholder (change-me, replace-with, ...). */
export function isPlaceholderSecret(value: string): boolean {
  const trimmed = value.trim();
  return KNOWN_PLACEHOLDER_SECRETS.some((known) => known.toLowerCase() === trimmed.toLowerCase()) || PLACEHOLDER_WORDS.test(trimmed);
}

const PLACEHOLDER_MESSAGE =
  'is a placeholder or a value published in the Billstream repository: set a random value ' +
  '(docker compose: `npm run compose:env` writes a .env; elsewhere e.g. `openssl rand -base64 32`)';

/** A secret variable: at least `minLength` characters and no known placeholder. */
export function secretEnv(minLength: number) {
  return z
    .string()
    .min(minLength, `must be at least ${minLength} characters (random; e.g. \`openssl rand -base64 32\`)`)
    .refine((value) => !isPlaceholderSecret(value), PLACEHOLDER_MESSAGE);
}
