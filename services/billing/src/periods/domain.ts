export type BillingPeriod = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'QUARTERLY' | 'ANNUAL';
export type BillingCycle = 'anniversary' | 'calendar';

/** How a subscription's periods are cut: from `start`, every `count` periods, in `timezone`. */
export interface ScheduleRule {
  start: Date;
  billingPeriod: BillingPeriod;
  billingPeriodCount: number;
  billingCycle: BillingCycle;
  /** IANA name, e.g. "Europe/Berlin". */
  timezone: string;
}

/** A half-open period [start, end). */
export interface Period {
  start: Date;
  end: Date;
  /**
   * Only on a calendar subscription's partial first period: the whole calendar period that
   * holds it and the factor its FIXED charges are prorated by (seconds of [start, end) /
   * seconds of [wholeStart, wholeEnd), 12 decimals, half up).
   */
  proration?: { factor: string; wholeStart: Date; wholeEnd: Date };
}

/** Wall-clock date and time in some time zone; month 1-12. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}
