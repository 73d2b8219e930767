const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { commonServiceEnv, isPlaceholderSecret } = require('@billstream/config');
const { gatewayEnv } = require('@billstream/gateway');
const { composeEnv, parseEnv, requiredComposeVariables } = require('./compose-env');

const ROOT = path.resolve(__dirname, '..');
const TEMPLATE = fs.readFileSync(path.join(ROOT, 'deploy', 'compose', 'env.example'), 'utf8');
const COMPOSE = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
const SCRIPT = path.join(__dirname, 'compose-env.js');

describe('compose-env: the .env of docker-compose.yml with random secrets (ADR 0034)', () => {
  it('gives every variable docker-compose.yml requires a value, and the secrets are among them', () => {
    const required = requiredComposeVariables(COMPOSE);
    expect(required).toEqual(expect.arrayContaining(['INTERNAL_TOKEN', 'BILLSTREAM_API_KEY', 'POSTGRES_PASSWORD', 'GATEWAY_DB_PASSWORD', 'BILLING_DB_PASSWORD']));
    const env = parseEnv(composeEnv(TEMPLATE));
    for (const name of required) expect([name, env[name]?.length > 0]).toEqual([name, true]);
  });

  it('writes random secrets of 32+ characters that the services accept and no deny-list knows', () => {
    const env = parseEnv(composeEnv(TEMPLATE));
    const secrets = Object.keys(env).filter((n) => n === 'INTERNAL_TOKEN' || n === 'BILLSTREAM_API_KEY' || n.endsWith('_PASSWORD'));
    expect(secrets.length).toBeGreaterThanOrEqual(10);
    for (const name of secrets) {
      expect(env[name].length).toBeGreaterThanOrEqual(32);
      expect(isPlaceholderSecret(env[name])).toBe(false);
    }
    expect(new Set(secrets.map((n) => env[n])).size).toBe(secrets.length);
    expect(commonServiceEnv.INTERNAL_TOKEN.safeParse(env.INTERNAL_TOKEN).success).toBe(true);
    expect(gatewayEnv.BOOTSTRAP_API_KEY.safeParse(env.BILLSTREAM_API_KEY).success).toBe(true);
    expect(env.BILLSTREAM_API_KEY).toMatch(/^bsk_[A-Za-z0-9_-]{43}$/);
    // Passwords go into postgres:// URLs and SQL: hex only.
    expect(env.POSTGRES_PASSWORD).toMatch(/^[0-9a-f]{64}$/);
    expect(parseEnv(composeEnv(TEMPLATE)).INTERNAL_TOKEN).not.toBe(env.INTERNAL_TOKEN);
  });

  it('keeps the other settings of the template as they are', () => {
    const env = parseEnv(composeEnv(TEMPLATE));
    expect(env).toMatchObject({ BOOTSTRAP_TENANT_ID: 'default', KAFKA_PARTITIONS: '4', KAFKA_TOPIC_PREFIX: '', WEBHOOK_ALLOW_INSECURE: 'false' });
  });

  it('writes the file readable by its owner only, and refuses to overwrite one that exists', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-env-'));
    const file = path.join(dir, '.env');
    try {
      const first = spawnSync(process.execPath, [SCRIPT, '--out', file], { encoding: 'utf8' });
      expect(first.status).toBe(0);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const written = fs.readFileSync(file, 'utf8');
      expect(parseEnv(written).INTERNAL_TOKEN.length).toBeGreaterThanOrEqual(32);
      const second = spawnSync(process.execPath, [SCRIPT, '--out', file], { encoding: 'utf8' });
      expect(second.status).toBe(1);
      expect(second.stderr).toContain('not overwritten');
      expect(fs.readFileSync(file, 'utf8')).toBe(written);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the file with --stdout', () => {
    const run = spawnSync(process.execPath, [SCRIPT, '--stdout'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(parseEnv(run.stdout).BILLSTREAM_API_KEY).toMatch(/^bsk_/);
  });
});
