/**
 * Failpoints (ADR 0017): named spots where a process kills itself with SIGKILL, so the
 * exactly-once proofs (test-e2e/invoices.e2e.test.ts) can crash a service at one exact step
 * instead of hoping a kill from outside lands there. Armed only by BILLSTREAM_FAILPOINTS, a
 * comma-separated list of names, read once when this module loads (the process start); never
 * set it in production. Unarmed, `failpoint` is an empty function.
 */
const ARMED: ReadonlySet<string> = new Set(
  (process.env.BILLSTREAM_FAILPOINTS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0),
);

/** The failpoints this process was started with (logged at start when any). */
export function armedFailpoints(): string[] {
  return [...ARMED];
}

function crashAt(name: string): void {
  if (!ARMED.has(name)) return;
  // stderr is written synchronously for pipes and files: the test sees which point fired.
  process.stderr.write(`failpoint ${name}: SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** Kills this process with SIGKILL when `name` is armed; otherwise does nothing. */
export const failpoint: (name: string) => void = ARMED.size === 0 ? () => undefined : crashAt;
