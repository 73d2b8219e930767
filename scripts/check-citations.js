#!/usr/bin/env node
/**
 * Part of `npm run lint` (issue #47 item 7): the repository states its own rules.
 * 1. No code or doc cites files outside the repository (the spec's BILLING*.md, CONTRACT.md,
 *    ARCHITECTURE.md, CONVENTIONS.md, a ../shared/ path): cite docs/api/*.md, docs/api.md,
 *    docs/architecture.md#rules or docs/adr/*.md instead.
 * 2. Every relative markdown link of the repository's .md files resolves: the file exists, and
 *    an anchor names a heading of it (GitHub's slug) or an explicit `<a id>`.
 */
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const CITED = ['services', 'libs', 'test-e2e', 'scripts', 'bench', 'docs', 'deploy', 'README.md'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage']);
const SELF = new Set(['scripts/check-citations.js', 'scripts/check-citations.test.js']);
const EXTS = new Set(['.ts', '.tsx', '.js', '.mjs', '.cjs', '.md', '.yml', '.yaml', '.json', '.sql', '.sh', '.css', '.html']);
const OUTSIDE = /BILLING(?:-\d)?\.md|CONTRACT\.md|ARCHITECTURE\.md|CONVENTIONS\.md|(?:\.\.\/)+shared\/(?:spec|[A-Z][-A-Z0-9]*\.md)|\/work\/shared/;

function* files(rel) {
  const abs = path.join(ROOT, rel);
  if (!fs.existsSync(abs)) return;
  if (fs.statSync(abs).isFile()) {
    yield rel;
    return;
  }
  for (const name of fs.readdirSync(abs).sort()) {
    if (SKIP_DIRS.has(name)) continue;
    const child = `${rel}/${name}`;
    if (fs.statSync(path.join(ROOT, child)).isDirectory()) yield* files(child);
    else if (EXTS.has(path.extname(name))) yield child;
  }
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map();
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const anchors = new Set();
  const seen = new Map();
  let fence = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    if (fence) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]);
      const n = seen.get(base) || 0;
      seen.set(base, n + 1);
      anchors.add(n ? `${base}-${n}` : base);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** Problems of one markdown file's relative links. */
function brokenLinks(rel) {
  const abs = path.join(ROOT, rel);
  const problems = [];
  let fence = false;
  fs.readFileSync(abs, 'utf8').split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fence = !fence;
    if (fence) return;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split('#');
      const resolved = file ? path.resolve(path.dirname(abs), decodeURIComponent(file)) : abs;
      if (!fs.existsSync(resolved)) {
        problems.push(`${rel}:${i + 1}: link to a missing file: ${target}`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        problems.push(`${rel}:${i + 1}: link to a missing anchor: ${target}`);
      }
    }
  });
  return problems;
}

function check() {
  const problems = [];
  for (const dir of CITED) {
    for (const rel of files(dir)) {
      if (SELF.has(rel) || rel === 'docs/openapi.json') continue;
      fs.readFileSync(path.join(ROOT, rel), 'utf8').split('\n').forEach((line, i) => {
        if (OUTSIDE.test(line)) problems.push(`${rel}:${i + 1}: cites a file outside the repository (cite docs/api/*.md, docs/architecture.md or docs/adr/*.md): ${line.trim().slice(0, 140)}`);
      });
    }
  }
  const markdown = ['README.md', ...files('docs'), ...files('services'), ...files('libs'), ...files('bench'), ...files('deploy'), ...files('scripts'), ...files('test-e2e')];
  for (const rel of markdown) if (rel.endsWith('.md')) problems.push(...brokenLinks(rel));
  return problems;
}

if (require.main === module) {
  const problems = check();
  if (problems.length) {
    console.error(`check-citations: ${problems.length} problem(s):`);
    for (const p of problems) console.error('  ' + p);
    process.exit(1);
  }
  console.log('check-citations: no outside citation, every markdown link resolves');
}

module.exports = { slug, OUTSIDE, check };
