import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runCli } from '../support/cli';
import { freshDatabase } from '../support/fresh-database';
import { kafka } from '../support/kafka';

/** The CLI's only stderr line, a pino JSON object: why it could not run, and nothing else. */
function onlyLogLine(stderr: string): Record<string, unknown> {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

/** The CLI's last stderr line, a pino JSON object. */
function lastLogLine(stderr: string): Record<string, unknown> {
  const lines = stderr.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

/** The CLI's stderr lines, level, command and message of each. */
function logMessages(stderr: string): { level: unknown; command: unknown; msg: unknown }[] {
  return stderr
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .map(({ level, command, msg }) => ({ level, command, msg }));
}

/** The log of a `reconcile` that ran. */
const RECONCILE_LOG = [
  { level: 'info', command: 'reconcile', msg: 'seat reconciliation: comparing every Team subscription with its active members' },
  { level: 'info', command: 'reconcile', msg: 'done' },
];

describe('the CLI on an unreachable database', () => {
  const build = resolve('dist');
  const sockets: Socket[] = [];
  let silent: Server | undefined;

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => (silent ? silent.close(r) : r(undefined)));
  });

  it('exits 3 with a JSON log line naming the database it could not reach (refused), never its password', async () => {
    const run = await runCli(build, ['audit', 'verify'], { DATABASE_URL: 'postgres://billing:s3cret-pass@127.0.0.1:1/ledger' });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toBe('');
    const line = lastLogLine(run.stderr);
    expect(line).toMatchObject({ level: 'error', command: 'audit verify', database: '127.0.0.1:1/ledger', timeoutMs: 5000 });
    expect(line.msg).toMatch(/^could not run audit verify: the database at 127\.0\.0\.1:1\/ledger could not be reached \(.*ECONNREFUSED/);
    expect(run.stderr).not.toContain('s3cret-pass');
  });

  it('gives up after DATABASE_CONNECT_TIMEOUT_MS on a server that accepts the connection and never answers, exit 3', async () => {
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const run = await runCli(build, ['ledger', 'reconcile'], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/billing`,
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
    });
    expect(run.code, run.stderr).toBe(3);
    const line = lastLogLine(run.stderr);
    expect(line).toMatchObject({ level: 'error', command: 'ledger reconcile', database: `127.0.0.1:${port}/billing`, timeoutMs: 1000 });
    expect(String(line.reason)).toMatch(/timeout/i);
    // The server saw the attempt: this is the timeout path, not a refusal.
    expect(sockets.length).toBeGreaterThan(0);
  });

  it('answers --help for every command and group on stdout, exit 0, without reaching a database', async () => {
    const unreachable = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' };
    const commands = [
      'audit verify',
      'ledger reconcile',
      'keys create',
      'keys revoke',
      'reconcile',
      'events archive',
      ...['usage', 'credits', 'seats', 'spend-limits', 'reconciliation', 'top-consumers', 'ancillary'].map((r) => `reports ${r}`),
    ];
    const runs = await Promise.all(commands.map((command) => runCli(build, [...command.split(' '), '--help'], unreachable)));
    for (const [i, command] of commands.entries()) {
      const run = runs[i]!;
      expect([command, run.code, run.stderr]).toEqual([command, 0, '']);
      const head = command.startsWith('reports ') ? 'reports <name>' : command;
      expect(run.stdout, command).toMatch(new RegExp(`^usage: cli ${head}`));
      expect(run.stdout, command).toContain(
        'exit codes: 0 done, 1 a check found a problem, 2 usage or configuration error, 3 could not run',
      );
    }
    // A group lists its commands; no command, every command.
    const [keys, all, unknownOption, couldNotRun] = await Promise.all([
      runCli(build, ['keys', '-h'], unreachable),
      runCli(build, ['--help'], unreachable),
      runCli(build, ['audit', 'verify', '--nope'], unreachable),
      runCli(build, ['audit', 'verify'], unreachable),
    ]);
    expect(keys.stdout).toMatch(/keys create[\s\S]*keys revoke/);
    expect(all.code).toBe(0);
    for (const command of ['audit verify', 'ledger reconcile', 'keys create', 'keys revoke', 'reports <name>', 'reconcile']) {
      expect(all.stdout).toContain(command);
    }
    // An unknown option is a usage error (2), an unreachable database could-not-run (3).
    expect(unknownOption.code).toBe(2);
    expect(couldNotRun.code).toBe(3);
  }, 300_000);

  it('answers --help and a usage error without loading the service (no Nest, no command code)', async () => {
    // main() in a process of its own; then the modules it loaded, read from require's cache.
    const loaded = (argv: string[]) =>
      new Promise<{ code: number; modules: string[] }>((done, fail) => {
        const script = `const { main } = require(${JSON.stringify(join(build, 'src', 'cli.js'))});
          main(${JSON.stringify(argv)}).then((code) => process.stdout.write('\\n@@' + JSON.stringify({ code, modules: Object.keys(require.cache) })));`;
        execFile(
          process.execPath,
          ['-e', script],
          { env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' } },
          (error, stdout) => {
            if (error) return fail(error);
            try {
              done(JSON.parse(stdout.slice(stdout.lastIndexOf('\n@@') + 3)) as { code: number; modules: string[] });
            } catch (failure) {
              fail(new Error(`no result in the output: ${stdout}`, { cause: failure }));
            }
          },
        );
      });
    const service = (modules: string[]) =>
      modules.filter((m) => m.includes('@nestjs') || m.includes('typeorm') || m.endsWith('cli-commands.js'));
    for (const [argv, code] of [
      [['--help'], 0],
      [['reports', 'usage', '--help'], 0],
      [['keys'], 2],
      [['audit', 'verify', '--nope'], 2],
    ] as const) {
      const run = await loaded([...argv]);
      expect([argv, run.code, service(run.modules)]).toEqual([argv, code, []]);
    }
    // A command does load it (the check above can see it): the database is unreachable, exit 3.
    const command = await loaded(['audit', 'verify']);
    expect(command.code).toBe(3);
    expect(service(command.modules)).toContain(join(build, 'src', 'cli-commands.js'));
  });

  it('a bad timeout value is a configuration error (exit 2) naming the variable', async () => {
    const run = await runCli(build, ['audit', 'verify'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x',
      DATABASE_CONNECT_TIMEOUT_MS: 'soon',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DATABASE_CONNECT_TIMEOUT_MS');
    // So is a malformed database URL (it was taken for an unreachable database: exit 3), without its password.
    const malformed = await runCli(build, ['audit', 'verify'], { DATABASE_URL: 'postgres://u:secretpw@[bad/db' });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('DATABASE_URL: must be a postgres:// URL with a host');
    expect(malformed.stderr).not.toContain('secretpw');
  });
});

describe('the CLI with a configuration file it cannot read', () => {
  it('exits 2 with one JSON line naming the file, and nothing from the framework', async () => {
    const db = await freshDatabase('cli_config');
    try {
      const run = await runCli(resolve('dist'), ['reports', 'usage'], { DATABASE_URL: db.url, PLANS_FILE: '/nonexistent/plans.json' });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      const line = onlyLogLine(run.stderr);
      expect(line).toMatchObject({ level: 'error', command: 'reports usage' });
      expect(String(line.msg)).toMatch(
        /^could not run reports usage: Invalid configuration:\n {2}- PLANS_FILE: cannot read \/nonexistent\/plans\.json/,
      );
    } finally {
      await db.drop();
    }
  });
});

describe('the CLI on a database that is not at its schema', () => {
  const build = resolve('dist');

  it('refuses an empty database (exit 3) and leaves it empty: a restore check does not pass on nothing', async () => {
    const server = inject('databaseUrl');
    const name = `billing_cli_empty_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(server);
      url.pathname = `/${name}`;
      for (const command of [
        ['audit', 'verify'],
        ['ledger', 'reconcile'],
      ]) {
        const run = await runCli(build, command, { DATABASE_URL: url.toString() });
        expect(run.code, run.stderr).toBe(3);
        expect(run.stdout).toBe('');
        const line = onlyLogLine(run.stderr);
        expect(line).toMatchObject({ level: 'error', command: command.join(' ') });
        expect(String(line.msg)).toMatch(
          new RegExp(
            `^could not run ${command.join(' ')}: the database has no billing schema \\(none of this build's \\d+ migrations is applied\\)`,
          ),
        );
      }
      const empty = new pg.Client({ connectionString: url.toString() });
      await empty.connect();
      const { rows } = await empty.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
      await empty.end();
      expect(rows[0].n).toBe(0);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('refuses a database behind this build (a migration not applied), naming it, exit 3', async () => {
    const db = await freshDatabase('cli_behind');
    try {
      const [last] = await db.ds.query(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`);
      await db.ds.query(`DELETE FROM schema_migrations WHERE name = $1`, [last.name]);
      const run = await runCli(build, ['audit', 'verify'], { DATABASE_URL: db.url });
      expect(run.code, run.stderr).toBe(3);
      expect(String(lastLogLine(run.stderr).msg)).toContain(`1 of ${db.ds.migrations.length} migrations not applied (first: ${last.name})`);
    } finally {
      await db.drop();
    }
  });

  it('refuses a database ahead of this build (a migration it does not know), naming it, exit 3', async () => {
    const db = await freshDatabase('cli_ahead');
    try {
      await db.ds.query(`INSERT INTO schema_migrations (timestamp, name) VALUES (9999999999999, 'FromANewerBuild9999999999999')`);
      const run = await runCli(build, ['ledger', 'reconcile'], { DATABASE_URL: db.url });
      expect(run.code, run.stderr).toBe(3);
      expect(String(lastLogLine(run.stderr).msg)).toContain(
        'the database is at a newer schema than this build: 1 migration(s) this build does not know (first: FromANewerBuild9999999999999)',
      );
    } finally {
      await db.drop();
    }
  });

  it('refuses an embedded folder without data instead of making a new database there, exit 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-embedded-'));
    try {
      const run = await runCli(build, ['audit', 'verify'], { DATABASE_URL: '', EMBEDDED_PG_DIR: dir });
      expect(run.code, run.stderr).toBe(3);
      expect(String(lastLogLine(run.stderr).msg)).toContain(`no embedded PostgreSQL data in ${dir}`);
      expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the CLI beside a running service', () => {
  const build = resolve('dist');

  it('runs `reconcile` with the service environment: it neither binds METRICS_PORT nor joins the consumer group', async () => {
    const db = await freshDatabase('cli_reconcile');
    // The service's metrics listener on this host (the same environment, e.g. inside its container).
    const metrics = createServer();
    await new Promise<void>((r) => metrics.listen(0, '127.0.0.1', r));
    const group = `cli-reconcile-${process.pid}-${Date.now()}`;
    try {
      const run = await runCli(build, ['reconcile'], {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: inject('kafkaBrokers'),
        KAFKA_GROUP_ID: group,
        METRICS_PORT: String((metrics.address() as { port: number }).port),
      });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ job: 'seat-reconciliation', ran: true });
      expect(logMessages(run.stderr)).toEqual(RECONCILE_LOG);
      // No consumer of the CLI ever joined the service's group (it would take partitions from the fleet).
      const admin = kafka().admin();
      await admin.connect();
      try {
        const { groups } = await admin.describeGroups([group]);
        expect(groups[0]?.members ?? []).toEqual([]);
        expect(['Dead', 'Empty', undefined]).toContain(groups[0]?.state);
        expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain(group);
      } finally {
        await admin.disconnect();
      }
    } finally {
      await new Promise((r) => metrics.close(r));
      await db.drop();
    }
  });

  it('says nothing about Kafka in `reconcile`, which leaves it out on purpose, whether KAFKA_BROKERS is set or not', async () => {
    const db = await freshDatabase('cli_reconcile_quiet');
    try {
      for (const brokers of [inject('kafkaBrokers'), '']) {
        const run = await runCli(build, ['reconcile'], { DATABASE_URL: db.url, KAFKA_BROKERS: brokers });
        expect(run.code, run.stderr).toBe(0);
        // Its own progress only: no warning that Kafka is not configured, nor that the outbox is not relayed.
        expect(logMessages(run.stderr), brokers || 'KAFKA_BROKERS unset').toEqual(RECONCILE_LOG);
      }
    } finally {
      await db.drop();
    }
  });
});
