/**
 * Variables of the customer service beyond the common ones: none. Declared all the same, so
 * that `npm run check:deploy` compares every service's schema with docs/operations.md alike.
 */
export const customerEnv = {};
