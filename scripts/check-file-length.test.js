const { leadingComment, longFilesWithoutReason, LIMIT } = require('./check-file-length');

const body = (n) => Array.from({ length: n }, (_, i) => `const x${i} = ${i};`).join('\n') + '\n';

describe('check-file-length', () => {
  it('reads the comments before the first line of code, after a shebang', () => {
    const text = '#!/usr/bin/env node\n/**\n * One file: a script.\n */\n// more\nconst a = 1;\n// not this\n';
    expect(leadingComment(text)).toContain('One file: a script.');
    expect(leadingComment(text)).toContain('// more');
    expect(leadingComment(text)).not.toContain('not this');
  });

  it('refuses a long file without the reason, and accepts it with one or when short', () => {
    const files = {
      'services/x/src/long.ts': body(LIMIT + 1),
      'services/x/src/long-with-reason.ts': `/** One file: the registry reads as one list. */\n${body(LIMIT + 5)}`,
      'services/x/src/reason-later.ts': `${body(LIMIT + 1)}/** One file: too late to count. */\n`,
      'services/x/src/short.ts': body(LIMIT),
      'libs/client/src/generated/openapi.ts': body(LIMIT * 3),
      'docs/notes.md': body(LIMIT * 2),
    };
    const bad = longFilesWithoutReason(Object.keys(files), (f) => files[f]);
    expect(bad.map((b) => b.file).sort()).toEqual(['services/x/src/long.ts', 'services/x/src/reason-later.ts']);
    expect(bad.find((b) => b.file === 'services/x/src/long.ts').lines).toBe(LIMIT + 1);
  });
});
