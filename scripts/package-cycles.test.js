const { packageCycles, packageOf } = require('./package-cycles');

const mod = (source, ...imports) => ({ source, dependencies: imports.map((resolved) => ({ resolved })) });

describe('packageCycles', () => {
  it('names the package of a module under libs/ or services/, and none elsewhere', () => {
    expect(packageOf('libs/http/src/app.ts')).toBe('libs/http');
    expect(packageOf('services/wallet/src/wallets/view.ts')).toBe('services/wallet');
    expect(packageOf('test-e2e/support/stack.ts')).toBeUndefined();
    expect(packageOf('node_modules/zod/index.js')).toBeUndefined();
  });

  it('finds the cycle a test file makes: a service test imports a lib that imports the app', () => {
    const cycles = packageCycles([
      mod('libs/testing/src/stack.ts', 'services/standalone/src/index.ts'),
      mod('services/standalone/src/index.ts', 'services/customer/src/index.ts'),
      mod('services/customer/src/index.ts', 'libs/http/src/index.ts'),
      mod('services/customer/src/customers/customers.int.test.ts', 'libs/testing/src/index.ts'),
    ]);
    expect(cycles).toEqual([
      {
        members: ['libs/testing', 'services/customer', 'services/standalone'],
        path: ['libs/testing', 'services/standalone', 'services/customer', 'libs/testing'],
      },
    ]);
  });

  it('finds none in a layered graph, imports inside one package and outside packages ignored', () => {
    expect(
      packageCycles([
        mod('libs/db/src/index.ts', 'libs/errors/src/index.ts', 'node_modules/knex/knex.js'),
        mod('libs/errors/src/index.ts', 'libs/errors/src/codes.ts'),
        mod('libs/errors/src/codes.ts', 'libs/errors/src/index.ts'),
        mod('services/customer/src/service.ts', 'libs/db/src/index.ts', 'libs/errors/src/index.ts'),
        mod('test-e2e/support/stack.ts', 'services/customer/src/index.ts'),
      ]),
    ).toEqual([]);
  });

  it('reports two separate cycles separately', () => {
    const cycles = packageCycles([
      mod('libs/a/src/i.ts', 'libs/b/src/i.ts'),
      mod('libs/b/src/i.ts', 'libs/a/src/i.ts'),
      mod('services/x/src/i.ts', 'services/y/src/i.ts'),
      mod('services/y/src/i.ts', 'services/x/src/i.ts'),
    ]);
    expect(cycles.map((c) => c.members)).toEqual([
      ['libs/a', 'libs/b'],
      ['services/x', 'services/y'],
    ]);
  });
});
