import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ApiClient, freePort, waitFor } from '@billstream/testing';

/**
 * What every console journey (issue #33, ADR 0050) starts from: the embedded default started by
 * the test (`node services/standalone/dist/main.js`, what `npm start` runs after its build), and
 * Debian's `chromium` driven by playwright-core, headless. `check` runs axe-core on the page (no
 * serious or critical violation) and writes its screenshot to CONSOLE_SCREENSHOTS (default a
 * temporary directory; docs/console/ holds the committed ones).
 */
// What page.evaluate's callbacks use in the browser (the tests compile without the DOM library).
declare const window: Record<string, unknown>;
declare const document: unknown;

const ROOT = path.resolve(__dirname, '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ConsoleStack {
  base: string;
  key: string;
  api: ApiClient;
  /** The embedded default's output so far (stdout and stderr). */
  output(): string;
  /** Console errors and page errors seen on any page made by `newPage`. */
  problems: string[];
  /** `ignoreHTTPSErrors`: trust a test's self-signed https server (the portal's framing pages). */
  newPage(options?: { ignoreHTTPSErrors?: boolean }): Promise<Page>;
  check(page: Page, name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the embedded default and the browser; `allowedErrors` are console errors a journey makes on purpose. */
export async function startConsoleStack(allowedErrors: RegExp[] = []): Promise<ConsoleStack> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: install Debian package chromium (apt-get install -y chromium) or set CHROMIUM_PATH; .ci/run does`);
  const shots = process.env.CONSOLE_SCREENSHOTS ? path.resolve(ROOT, process.env.CONSOLE_SCREENSHOTS) : mkdtempSync(path.join(os.tmpdir(), 'billstream-console-shots-'));
  mkdirSync(shots, { recursive: true });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-console-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', BILLING_INTERVAL_MS: '0' };
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['services/standalone/dist/main.js'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    if (child.pid && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const key = await waitFor(() => /API key:\s+(bsk_\S+)/.exec(output)?.[1], { timeoutMs: 540_000, intervalMs: 250, what: 'the printed API key' }).catch((err) => {
      throw new Error(`${String(err)}\n${output}`);
    });
    const base = `http://127.0.0.1:${port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    const problems: string[] = [];
    const opened = browser;
    return {
      base,
      key,
      api: new ApiClient(base, key),
      output: () => output,
      problems,
      async newPage(options = {}) {
        const page = await (await opened.newContext({ viewport: { width: 1280, height: 900 }, ...options })).newPage();
        page.on('console', (m) => {
          if (m.type() === 'error' && !allowedErrors.some((re) => re.test(m.text()))) problems.push(`console: ${m.text()}`);
        });
        page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
        return page;
      },
      async check(page, name) {
        // Evaluated through the DevTools protocol, not injected as a script: the page's CSP stays as it is.
        await page.evaluate(axe.source);
        const result = (await page.evaluate(() => (window as unknown as { axe: typeof axe }).axe.run(document as never, { resultTypes: ['violations'] }))) as axe.AxeResults;
        const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
        expect(bad).toEqual([]);
        await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
