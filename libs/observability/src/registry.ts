import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The one Prometheus registry of the process (ADR 0020): every service of a process registers
 * its metrics here, so the embedded default exposes one registry for all its services.
 */
export const metricsRegistry = new Registry();

let enabled = false;

/** Whether this process records metrics (METRICS_ENABLED; off: every instrument is a no-op). */
export function metricsEnabled(): boolean {
  return enabled;
}

/**
 * Turns recording on for the whole process, once, with prom-client's process and Node
 * metrics (CPU, memory, event loop lag, GC, handles). Instruments read the switch when they
 * record, so the call may come after the services are composed.
 */
export function enableMetrics(): void {
  if (enabled) return;
  enabled = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** The text exposition of every metric (the body of GET /metrics) and its content type. */
export async function renderMetrics(): Promise<{ body: string; contentType: string }> {
  return { body: await metricsRegistry.metrics(), contentType: metricsRegistry.contentType };
}
