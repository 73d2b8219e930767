/** Polls `probe` until it returns a truthy value or the time is up. */
export async function waitFor<T>(probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const { timeoutMs = 15_000, intervalMs = 100, what = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
