#!/usr/bin/env node
/**
 * Writes the `.env` of docker-compose.yml with random secrets (ADR 0034): deploy/compose/env.example
 * with every secret filled in (INTERNAL_TOKEN, BILLSTREAM_API_KEY, DOCUMENT_LINK_SECRET, every *_PASSWORD) and the other
 * settings as they are there. docker-compose.yml has no default for a secret: without this file
 * (or the variables in the environment) `docker compose up` stops and names the missing one.
 *
 *   npm run compose:env                       # writes .env next to docker-compose.yml
 *   node scripts/compose-env.js --out FILE    # writes FILE instead (deploy/compose/ci.sh)
 *   node scripts/compose-env.js --stdout      # prints it
 *
 * Refuses to overwrite an existing file: the role passwords are applied when the Postgres
 * volume is first initialised, so new ones would lock the services out of an existing volume.
 * Needs Node only (no npm install, no build).
 */
const fs = require('node:fs');
const path = require('node:path');
const { randomBytes } = require('node:crypto');

const ROOT = path.resolve(__dirname, '..');
const TEMPLATE = path.join(ROOT, 'deploy', 'compose', 'env.example');

const isSecret = (name) => name === 'INTERNAL_TOKEN' || name === 'BILLSTREAM_API_KEY' || name === 'DOCUMENT_LINK_SECRET' || name.endsWith('_PASSWORD');

/**
 * A random value for a secret variable: 32 random bytes. The API key in base64url with the `bsk_`
 * prefix of Billstream keys; the internal token in base64url (43 characters); passwords in hex
 * (64 characters), safe in a postgres:// URL and in SQL.
 */
function secretValue(name, random = randomBytes) {
  if (name === 'BILLSTREAM_API_KEY') return `bsk_${random(32).toString('base64url')}`;
  if (name === 'INTERNAL_TOKEN') return random(32).toString('base64url');
  return random(32).toString('hex');
}

/** The template with every empty secret given a random value; comments and other lines kept. */
function composeEnv(template, random = randomBytes, now = new Date()) {
  const lines = template.split('\n').map((line) => {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    return m && isSecret(m[1]) && m[2].trim() === '' ? `${m[1]}=${secretValue(m[1], random)}` : line;
  });
  const header = [
    `# Written by scripts/compose-env.js on ${now.toISOString()}: random secrets for docker-compose.yml.`,
    '# Keep this file out of git (.gitignore has it) and keep it as long as the Postgres volume lives.',
    '',
  ];
  return [...header, ...lines].join('\n');
}

/** `NAME=value` lines of a .env text (no quoting, as docker compose reads ours). */
function parseEnv(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/** The variables docker-compose.yml requires (`${NAME:?message}`). */
function requiredComposeVariables(composeText) {
  return [...new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]))].sort();
}

function main(argv) {
  const text = composeEnv(fs.readFileSync(TEMPLATE, 'utf8'));
  if (argv.includes('--stdout')) {
    process.stdout.write(text);
    return;
  }
  const outIndex = argv.indexOf('--out');
  if (outIndex >= 0 && !argv[outIndex + 1]) {
    console.error('usage: node scripts/compose-env.js [--out FILE | --stdout]');
    process.exit(2);
  }
  const file = path.resolve(outIndex >= 0 ? argv[outIndex + 1] : path.join(ROOT, '.env'));
  try {
    // 'wx': fails when the file exists, atomically; 0600: the secrets are readable by their owner only.
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    console.error(
      `compose-env: ${file} exists; not overwritten. Its passwords are those of the Postgres volume: ` +
        'to start over, `docker compose down -v` first, then delete the file and run this again.',
    );
    process.exit(1);
  }
  console.log(`compose-env: wrote ${path.relative(process.cwd(), file) || file} with random secrets; now \`docker compose up --build\``);
}

if (require.main === module) main(process.argv.slice(2));

module.exports = { composeEnv, parseEnv, requiredComposeVariables, isSecret, secretValue };
