import { EXACT_ZERO, exact } from '@billstream/money';
import Decimal from 'decimal.js';
import type { PriceType } from '../wallets/domain';
import type { InvoiceLine, LineApplication, LinePriceType } from './domain';

/**
 * The invoice arithmetic of ADR 0016: a wallet pays at most its usable credits' worth in minor
 * units, rounded down; the credits it is debited are rounded up to 12 decimals and capped at
 * the usable credits, so it never pays less than the invoice shows and never goes below zero.
 */

/** Decimals of the credits debited for an invoice. */
export const CREDIT_DECIMALS = 12;

/** Minor units per credit: conversion_rate x 10^minorDigits. */
export function minorPerCredit(conversionRate: Decimal, minorDigits: number): Decimal {
  return conversionRate.times(exact(10).pow(minorDigits));
}

/** What `credits` are worth in minor units, rounded down. */
export function worthInMinor(credits: Decimal, perCredit: Decimal): Decimal {
  return credits.times(perCredit).floor();
}

/**
 * The credits that pay `amount` minor units: amount ÷ perCredit rounded up to 12 decimals,
 * at most `usable` (when `amount` is at most `worthInMinor(usable)`, `usable` credits still pay it).
 */
export function creditsFor(amount: Decimal, perCredit: Decimal, usable: Decimal): Decimal {
  const credits = amount.dividedBy(perCredit).toDecimalPlaces(CREDIT_DECIMALS, Decimal.ROUND_UP);
  return credits.greaterThan(usable) ? usable : credits;
}

/** Whether a wallet's `allowed_price_types` covers a line of `priceType` (ALL covers both). */
export function allows(allowed: readonly PriceType[], priceType: LinePriceType): boolean {
  return allowed.includes('ALL') || allowed.includes(priceType);
}

/**
 * The PRE_PAID wallet's applications, line by line in the given order: each allowed line takes
 * min(its amount, what the wallet is worth minus what earlier lines took). Lines it takes
 * nothing from are left out.
 */
export function prepaidApplications(lines: readonly InvoiceLine[], allowed: readonly PriceType[], worth: Decimal): LineApplication[] {
  const applications: LineApplication[] = [];
  let left = worth;
  for (const line of lines) {
    if (!allows(allowed, line.priceType) || left.isZero()) continue;
    const amount = line.amount.lessThan(left) ? line.amount : left;
    if (amount.isZero()) continue;
    applications.push({ id: line.id, amount });
    left = left.minus(amount);
  }
  return applications;
}

/** What is left due on the lines the POST_PAID wallet covers, after the prepaid applications. */
export function postpaidDue(lines: readonly InvoiceLine[], allowed: readonly PriceType[], prepaid: readonly LineApplication[]): Decimal {
  const applied = new Map(prepaid.map((a) => [a.id, a.amount]));
  return lines
    .filter((line) => allows(allowed, line.priceType))
    .reduce((due, line) => due.plus(line.amount.minus(applied.get(line.id) ?? EXACT_ZERO)), EXACT_ZERO);
}
