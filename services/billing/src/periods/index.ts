export type { BillingCycle, BillingPeriod, LocalDateTime, Period, ScheduleRule } from './domain';
export { billingSchedule, type BillingSchedule } from './schedule';
export { prorationFactor } from './proration';
export { assertTimeZone, instantOf, localAt } from './time-zone';
