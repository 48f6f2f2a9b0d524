// Wraps the TypeORM CLI on the built data source: generate <Name> | check | run | revert.
// `check` migrates a scratch database and fails if the entities need a migration that is not checked in.
// `run` migrates DATABASE_URL as the service does at start, and `revert` reverts its last migration, both
// under the migrations' advisory lock: each waits for an instance that is migrating (and an instance
// starting meanwhile waits for it).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import pg from 'pg';

const [command, name] = process.argv.slice(2);
const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const typeorm = (args, env = {}) =>
  execFileSync('npx', ['typeorm', '-d', 'dist/src/common/database/data-source.js', ...args], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });

/** The build's data source and the functions that open it under the migrations' lock (dist/, built by the npm script). */
function built() {
  const require = createRequire(import.meta.url);
  require('reflect-metadata');
  const { openDataSource, revertLastMigration } = require('../dist/src/common/database/database.module.js');
  const { dataSourceOptions } = require('../dist/src/common/database/data-source.js');
  return { openDataSource, revertLastMigration, dataSourceOptions };
}

async function withScratchDatabase(work) {
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const db = `migration_check_${process.pid}`;
  await admin.query(`CREATE DATABASE ${db}`);
  const url = new URL(base);
  url.pathname = `/${db}`;
  try {
    typeorm(['migration:run'], { DATABASE_URL: url.toString() });
    work(url.toString());
  } finally {
    await admin.query(`DROP DATABASE ${db} WITH (FORCE)`);
    await admin.end();
  }
}

switch (command) {
  case 'generate':
    if (!name) throw new Error('usage: npm run migration:generate -- <Name>');
    await withScratchDatabase((url) => typeorm(['migration:generate', '--pretty', `migrations/${name}`], { DATABASE_URL: url }));
    console.log(`written migrations/*-${name}.ts: add it to migrations/index.ts`);
    break;
  case 'check':
    await withScratchDatabase((url) => typeorm(['migration:generate', '--check', 'migrations/Drift'], { DATABASE_URL: url }));
    console.log('entities and migrations agree');
    break;
  case 'run': {
    const { openDataSource, dataSourceOptions } = built();
    const ds = await openDataSource(dataSourceOptions(base, 2), true);
    await ds.destroy();
    break;
  }
  case 'revert': {
    const { revertLastMigration, dataSourceOptions } = built();
    const reverted = await revertLastMigration(dataSourceOptions(base, 2));
    console.log(reverted ? `reverted ${reverted}` : 'no migration is applied: nothing reverted');
    break;
  }
  default:
    throw new Error('usage: migration.mjs generate <Name> | check | run | revert');
}
