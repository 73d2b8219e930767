import { env } from '@billstream/config';
import { enableMetrics, listenMetrics, startTracing, stopTracing, tracingFromEnv, type MetricsListener } from '@billstream/observability';

/** Variables of the metrics listener (ADR 0020), read by every process. */
export const metricsEnv = {
  /** false: no metric is recorded and no listener opens (the overhead benches compare both). */
  METRICS_ENABLED: env.bool(true),
  /** The port of GET /metrics; default the service's PORT + 1000 (gateway 9080, ..., billing 9085), 0 when PORT is 0. */
  METRICS_PORT: env.port(0).optional(),
};

/** The metrics port a process uses: METRICS_PORT, else its PORT + 1000 (a free port when that is 0 or beyond 65535). */
export function metricsPortOf(config: { PORT: number; METRICS_PORT?: number }): number {
  if (config.METRICS_PORT !== undefined) return config.METRICS_PORT;
  return config.PORT === 0 || config.PORT + 1000 > 65535 ? 0 : config.PORT + 1000;
}

export interface Observability {
  /** The metrics listener's port (undefined when metrics are off). */
  metricsPort?: number;
  tracing: boolean;
  stop(): Promise<void>;
}

/**
 * Turns on what the configuration asks for, before the services are composed: metrics (one
 * registry for the process, GET /metrics on its own port) and tracing (the standard OTEL_*
 * variables; the SDK is loaded only then).
 */
export async function startObservability(options: {
  service: string;
  metricsEnabled: boolean;
  metricsPort: number;
  host: string;
}): Promise<Observability> {
  const tracing = tracingFromEnv(`billstream-${options.service}`);
  if (tracing) startTracing(tracing);
  let listener: MetricsListener | undefined;
  if (options.metricsEnabled) {
    enableMetrics();
    listener = await listenMetrics(options.metricsPort, options.host);
  }
  return {
    metricsPort: listener?.port,
    tracing: tracing !== undefined,
    async stop() {
      await listener?.close();
      await stopTracing();
    },
  };
}
