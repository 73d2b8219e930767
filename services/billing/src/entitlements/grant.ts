import type { FeatureType } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { toDecimalString } from '@billstream/money';
import type { Grant, GrantInput } from './domain';

const ALLOWED: Record<FeatureType, ReadonlyArray<keyof GrantInput>> = {
  BOOLEAN: ['isEnabled'],
  METERED: ['isEnabled', 'usageLimit', 'usageResetPeriod', 'isSoftLimit'],
  STATIC: ['isEnabled', 'staticValue'],
};

const WIRE: Record<keyof GrantInput, string> = {
  isEnabled: 'is_enabled',
  usageLimit: 'usage_limit',
  usageResetPeriod: 'usage_reset_period',
  isSoftLimit: 'is_soft_limit',
  staticValue: 'static_value',
};

function refuseOthers(type: FeatureType, input: GrantInput): void {
  for (const key of Object.keys(WIRE) as Array<keyof GrantInput>) {
    if (input[key] !== undefined && !ALLOWED[type].includes(key)) {
      throw new ValidationError(`${WIRE[key]} is not allowed on an entitlement of a ${type} feature`, { field: WIRE[key], feature_type: type });
    }
  }
}

/**
 * The grant of a new entitlement, checked against its feature's type: BOOLEAN takes
 * is_enabled; METERED takes usage_limit (required; null = unlimited), usage_reset_period
 * (default BILLING_PERIOD) and is_soft_limit (default false); STATIC takes static_value
 * (required). is_enabled defaults to true on every type.
 */
export function newGrant(type: FeatureType, input: GrantInput): Grant {
  refuseOthers(type, input);
  if (type === 'METERED' && input.usageLimit === undefined) {
    throw new ValidationError('usage_limit is required on a METERED entitlement (null = unlimited)', { field: 'usage_limit' });
  }
  if (type === 'STATIC' && (input.staticValue === undefined || input.staticValue === null)) {
    throw new ValidationError('static_value is required on a STATIC entitlement', { field: 'static_value' });
  }
  return {
    isEnabled: input.isEnabled ?? true,
    usageLimit: type === 'METERED' && input.usageLimit ? toDecimalString(input.usageLimit) : null,
    usageResetPeriod: type === 'METERED' ? (input.usageResetPeriod ?? 'BILLING_PERIOD') : null,
    isSoftLimit: type === 'METERED' ? (input.isSoftLimit ?? false) : false,
    staticValue: type === 'STATIC' ? input.staticValue! : null,
  };
}

/** A grant with the changes of a PUT, under the same rules as a new one. */
export function changedGrant(type: FeatureType, current: Grant, input: GrantInput): Grant {
  refuseOthers(type, input);
  if (type === 'STATIC' && input.staticValue === null) {
    throw new ValidationError('static_value is required on a STATIC entitlement', { field: 'static_value' });
  }
  return {
    isEnabled: input.isEnabled ?? current.isEnabled,
    usageLimit: input.usageLimit === undefined ? current.usageLimit : input.usageLimit && toDecimalString(input.usageLimit),
    usageResetPeriod: input.usageResetPeriod ?? current.usageResetPeriod,
    isSoftLimit: input.isSoftLimit ?? current.isSoftLimit,
    staticValue: input.staticValue ?? current.staticValue,
  };
}
