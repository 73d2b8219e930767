/**
 * When to try again after failed attempt number `attempt` (1 = the first send): the
 * schedule's delay n after retry n-1, or null when the schedule is used up (give up).
 */
export function nextAttemptAt(attempt: number, scheduleMs: number[], now: Date): Date | null {
  const delay = scheduleMs[attempt - 1];
  return delay === undefined ? null : new Date(now.getTime() + delay);
}
