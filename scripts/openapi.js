#!/usr/bin/env node
/**
 * Writes docs/openapi.json from the built gateway (`npm run openapi`), or with `--check`
 * compares it with the generated document and exits 1 with a summary of the drift
 * (`npm run openapi:check`, run by CI).
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TARGET = path.join(ROOT, 'docs', 'openapi.json');
const GENERATOR = path.join(ROOT, 'services', 'gateway', 'dist', 'openapi', 'index.js');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operations(doc) {
  const out = new Map();
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      if (item[method]) out.set(`${method.toUpperCase()} ${p}`, JSON.stringify(item[method]));
    }
  }
  return out;
}

function driftSummary(committed, generated) {
  const lines = [];
  const before = operations(committed);
  const after = operations(generated);
  for (const key of after.keys()) if (!before.has(key)) lines.push(`  + ${key} (route not in docs/openapi.json)`);
  for (const key of before.keys()) if (!after.has(key)) lines.push(`  - ${key} (in docs/openapi.json, no such route)`);
  for (const [key, value] of after) if (before.has(key) && before.get(key) !== value) lines.push(`  ~ ${key} (changed)`);
  const schemasBefore = committed.components?.schemas ?? {};
  const schemasAfter = generated.components?.schemas ?? {};
  for (const name of new Set([...Object.keys(schemasBefore), ...Object.keys(schemasAfter)])) {
    if (JSON.stringify(schemasBefore[name]) !== JSON.stringify(schemasAfter[name])) lines.push(`  ~ components.schemas.${name}`);
  }
  const { paths: _a, components: _b, ...restBefore } = committed;
  const { paths: _c, components: _d, ...restAfter } = generated;
  if (JSON.stringify(restBefore) !== JSON.stringify(restAfter)) lines.push('  ~ document header (info, servers, tags)');
  return lines.length > 0 ? lines : ['  ~ formatting only'];
}

function main() {
  if (!fs.existsSync(GENERATOR)) {
    console.error(`openapi: ${path.relative(ROOT, GENERATOR)} is missing; run "npm run build" first`);
    process.exit(2);
  }
  const { buildOpenApiDocument } = require(GENERATOR);
  const text = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
  const generated = JSON.parse(text);
  const count = operations(generated).size;

  if (!process.argv.includes('--check')) {
    fs.mkdirSync(path.dirname(TARGET), { recursive: true });
    fs.writeFileSync(TARGET, text);
    console.log(`openapi: wrote docs/openapi.json (${count} operations)`);
    return;
  }
  if (!fs.existsSync(TARGET)) {
    console.error('openapi: docs/openapi.json does not exist; run "npm run openapi" and commit it');
    process.exit(1);
  }
  const committedText = fs.readFileSync(TARGET, 'utf8');
  if (committedText === text) {
    console.log(`openapi: docs/openapi.json matches the routes (${count} operations)`);
    return;
  }
  let committed;
  try {
    committed = JSON.parse(committedText);
  } catch {
    committed = {};
  }
  console.error('openapi: docs/openapi.json differs from the document generated from the routes:');
  console.error(driftSummary(committed, generated).join('\n'));
  console.error('Run "npm run openapi" and commit docs/openapi.json.');
  process.exit(1);
}

main();
