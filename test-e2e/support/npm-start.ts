import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** A running `npm start` and what it printed so far. */
export interface Started {
  child: ChildProcess;
  output: () => string;
}

/** `npm start` exactly as a new user runs it (no DATABASE_URL, no KAFKA_BROKERS), with `extra` settings. */
export function npmStart(dataDir: string, port: number, extra: NodeJS.ProcessEnv = {}): Started {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', ...extra };
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  const child = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  return { child, output: () => out };
}

/** Stops the process group of `started` with `signal` and waits for it to exit. */
export async function stop(started: Started, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (started.child.exitCode !== null || !started.child.pid) return;
  const exited = new Promise((r) => started.child.once('exit', r));
  process.kill(-started.child.pid, signal);
  await exited;
}
