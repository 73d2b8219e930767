import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { freePort } from './net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Brokers started by the global setup (or given in KAFKA_BROKERS). */
export function kafkaBrokers(): string[] {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) throw new Error('KAFKA_BROKERS is not set: run tests through jest (global setup starts Kafka)');
  return brokers.split(',').map((b) => b.trim());
}

/** A topic/group prefix unique to one test, so that tests sharing a broker never meet. */
export function uniqueTopicPrefix(label = 't'): string {
  return `${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}.`;
}

/** A Kafka broker of one test's own (deploy/kafka/kafka.sh), for tests that stop and start it. */
export interface OwnKafkaBroker {
  brokers: string[];
  /** Starts the broker; resolves once it accepts clients (kafka.sh start returned). */
  start(): Promise<void>;
  /** Stops it (SIGTERM, as an operator would). */
  stop(): Promise<void>;
  /** Stops it and deletes its data directory. */
  remove(): Promise<void>;
}

const execFileAsync = promisify(execFile);
const KAFKA_SCRIPT = path.resolve(__dirname, '../../../deploy/kafka/kafka.sh');

/** A free port whose next port is free too (the broker's controller listens there). */
async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await freePort();
    const second = await freePort();
    if (second === port + 1) return port;
  }
  throw new Error('no free port pair');
}

/** Never the shared broker: a new one on free ports with a temporary data directory. */
export async function ownKafkaBroker(): Promise<OwnKafkaBroker> {
  const port = await freePortPair();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-own-kafka-'));
  const env = { ...process.env, KAFKA_PORT: String(port), KAFKA_DATA_DIR: dataDir };
  const run = async (...args: string[]) => {
    await execFileAsync('bash', [KAFKA_SCRIPT, ...args], { env });
  };
  return {
    brokers: [`127.0.0.1:${port}`],
    start: () => run('start'),
    stop: () => run('stop'),
    remove: () => run('stop', '--clean'),
  };
}
