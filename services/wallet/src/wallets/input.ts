import type { z } from 'zod';
import type { alertSettingsBody, autoTopupBody } from '@billstream/contracts';
import { exact } from '@billstream/money';
import type { AlertLevel, AlertSettings, AutoTopup } from './domain';

/** An accepted ISO 8601 timestamp (up to nanoseconds) as a Date (millisecond precision). */
export function parseTimestamp(value: string): Date {
  return new Date(value.replace(/(\.\d{3})\d+/, '$1'));
}

export function autoTopupFromBody(body: z.output<typeof autoTopupBody>): AutoTopup {
  return {
    enabled: body.enabled,
    threshold: body.threshold === undefined ? null : exact(body.threshold),
    amount: body.amount === undefined ? null : exact(body.amount),
    invoicing: body.invoicing,
  };
}

function level(l: { threshold: string; condition: 'below' } | undefined): AlertLevel | undefined {
  return l && { threshold: exact(l.threshold), condition: l.condition };
}

export function alertSettingsFromBody(body: z.output<typeof alertSettingsBody>): AlertSettings {
  return {
    alertEnabled: body.alert_enabled,
    critical: level(body.critical),
    warning: level(body.warning),
    info: level(body.info),
  };
}
