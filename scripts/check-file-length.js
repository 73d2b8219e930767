#!/usr/bin/env node
/**
 * Part of `npm run lint` (issue #30 item 5e): a source file of more than 400 lines must open
 * with a comment that says why it is one file, marked by the words "One file" (for example
 * "One file: every case shares the stack started in beforeAll"). Generated files are exempt.
 * Exits 1 naming each long file without that comment.
 */
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const LIMIT = 400;
const SOURCE = /\.(ts|js|mjs|cjs)$/;
const EXEMPT = [/^libs\/client\/src\/generated\//];

/** The text of the comments before the first line of code (a shebang is skipped). */
function leadingComment(text) {
  const lines = text.split('\n');
  const out = [];
  let inBlock = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (!inBlock && (line === '' || line.startsWith('#!'))) continue;
    if (inBlock) {
      out.push(line);
      if (line.includes('*/')) inBlock = false;
      continue;
    }
    if (line.startsWith('//')) {
      out.push(line);
      continue;
    }
    if (line.startsWith('/*')) {
      out.push(line);
      inBlock = !line.includes('*/');
      continue;
    }
    break;
  }
  return out.join('\n');
}

function lineCount(text) {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** The files of `files` (paths relative to the repository) that break the rule. */
function longFilesWithoutReason(files, read = (f) => fs.readFileSync(path.join(ROOT, f), 'utf8')) {
  const bad = [];
  for (const file of files) {
    if (!SOURCE.test(file) || EXEMPT.some((re) => re.test(file))) continue;
    const text = read(file);
    const lines = lineCount(text);
    if (lines > LIMIT && !/one file/i.test(leadingComment(text))) bad.push({ file, lines });
  }
  return bad;
}

function trackedFiles() {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'libs', 'services', 'test-e2e', 'bench', 'scripts'], { cwd: ROOT, encoding: 'utf8' });
  return out.split('\n').filter((f) => f && fs.existsSync(path.join(ROOT, f)));
}

if (require.main === module) {
  const bad = longFilesWithoutReason(trackedFiles());
  for (const { file, lines } of bad) {
    process.stdout.write(`  error file-length: ${file} has ${lines} lines; split it, or open it with a comment that says why it is one file ("One file: ...")\n`);
  }
  if (bad.length > 0) {
    process.stdout.write(`\nx ${bad.length} file(s) over ${LIMIT} lines without a reason\n`);
    process.exit(1);
  }
}

module.exports = { leadingComment, longFilesWithoutReason, LIMIT };
