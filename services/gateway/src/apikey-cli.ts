import { parseArgs } from 'node:util';
import { PERMISSIONS } from '@billstream/contracts';
import { migrate, openServiceDatabases } from '@billstream/db';
import { ApiKeyService } from './api-keys/service';
import { ApiKeyStore } from './api-keys/store';
import { migrations, SCHEMA } from './migrations';

const USAGE = `Usage:
  npm run apikey -- create --tenant T --environment E [--permissions p,q] [--name N]
  npm run apikey -- list --tenant T [--environment E]
  npm run apikey -- revoke --tenant T --id key_...

Uses DATABASE_URL, or the embedded database in DATA_DIR (default ./.data) when unset.
Permissions: * (default) or a comma-separated list of ${PERMISSIONS.join(', ')}.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      tenant: { type: 'string' },
      environment: { type: 'string' },
      permissions: { type: 'string' },
      name: { type: 'string' },
      id: { type: 'string' },
    },
  });
  if (!command || !['create', 'list', 'revoke'].includes(command)) fail('Unknown or missing command.');
  if (!values.tenant) fail('--tenant is required.');
  const databases = await openServiceDatabases({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ?? '.data' });
  const db = databases.forSchema(SCHEMA);
  try {
    await migrate(db, SCHEMA, migrations);
    const keys = new ApiKeyService(db, new ApiKeyStore());
    if (command === 'create') {
      if (!values.environment) fail('--environment is required.');
      const permissions = (values.permissions ?? '*').split(',').map((p) => p.trim()).filter(Boolean);
      const unknown = permissions.filter((p) => p !== '*' && !(PERMISSIONS as readonly string[]).includes(p));
      if (unknown.length > 0) fail(`Unknown permission(s): ${unknown.join(', ')}`);
      const { key, record } = await keys.create({
        tenantId: values.tenant,
        environmentId: values.environment,
        name: values.name ?? 'cli',
        permissions,
        createdBy: 'cli',
      });
      process.stdout.write(
        `Created ${record.id} for tenant ${record.tenantId}, environment ${record.environmentId}, permissions ${record.permissions.join(',')}\n` +
          `Key (shown once): ${key}\n`,
      );
    } else if (command === 'list') {
      const { items } = await keys.list({ tenantId: values.tenant, environmentId: values.environment }, 1000, 0);
      for (const k of items) {
        process.stdout.write(
          `${k.id}\t${k.environmentId}\t${k.name}\t${k.permissions.join(',')}\t${k.keyPrefix}…\t${k.revokedAt ? 'revoked' : 'active'}\n`,
        );
      }
    } else {
      if (!values.id) fail('--id is required.');
      await keys.revoke({ tenantId: values.tenant }, values.id);
      process.stdout.write(`Revoked ${values.id}\n`);
    }
  } finally {
    await databases.close();
  }
}

main().catch((err) => {
  process.stderr.write(`apikey: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
