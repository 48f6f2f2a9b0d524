import 'reflect-metadata';
import { createLogger, PinoLogger } from './common/logging/logger';
import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { z } from 'zod';
import { ApiKeysService } from './accounts/auth/api-keys.service';
import { scopeSchema } from 'src/common/auth/scopes';
import { AuditService } from './audit/audit.service';
import { CliModule, cliConfig } from './cli.module';
import { AppModule } from './app.module';
import { ConfigError, loadConfig } from './common/config/config';
import { readConfigFiles } from './config-files';
import { DataSource } from 'typeorm';
import { ArchiveRefused, archiveEventMonth } from './metering/event-archive';
import { EmbeddedPostgres } from './common/database/embedded-postgres';
import { assertDatabaseReachable, databaseAddress } from './common/database/reachable';
import { withQueryBound } from './common/database/query-bounds';
import { JobsService } from './jobs/jobs.service';
import { LedgerService } from './ledger/ledger.service';
import { ReportsCliModule } from './reports/reports-cli.module';
import { parseReportQuery } from './reports/report-query';
import { ReportsService, type Report } from './reports/reports.service';
import { REPORT_NAMES, type ReportName } from './reports/report-names';
import { usageOf, UsageError, type Args, type CommandName } from './cli-usage';
import { toCsv } from './reports/to-csv';

/**
 * The CLI's commands (cli.ts parses the command line and loads this file only to run one). Exit
 * codes: 0 done, 1 a check found a problem, 2 usage or configuration error, 3 could not run
 * (database unreachable, any unexpected failure).
 */
const ACTOR = 'cli';

type Command = (app: INestApplicationContext, args: Args) => Promise<number>;

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
};

/**
 * The CLI's log: JSON lines on stderr (stdout holds only the command's answer). Its own lines
 * (progress, findings, why it could not run) always; the framework's from `warn` up.
 */
const log = createLogger('info', process.stderr);
/** The command being run, on each of its log lines. */
let running = '';

/** Every command: the names (cli-usage.ts) are the keys, so none is left without its code. */
const COMMANDS: Record<CommandName, Command> = {
  'audit verify': async (app) => {
    const result = await app.get(AuditService).verify();
    print(result);
    if (!result.ok) {
      const { chain, seq, reason, detail } = result.problem;
      log.error(
        { command: 'audit verify', chain, seq, reason, detail },
        `audit log broken at chain ${chain} seq ${seq}: ${reason} (${detail})`,
      );
    }
    return result.ok ? 0 : 1;
  },
  'ledger reconcile': async (app, args) => {
    const ledger = app.get(LedgerService);
    const account = args.flags.get('account');
    if (account !== undefined && !(await ledger.accountExists(account))) throw new UsageError(`--account: no account ${account}`);
    const problems = await ledger.reconcile(account);
    print({ ok: problems.length === 0, discrepancies: problems });
    if (problems.length > 0) {
      log.error({ command: 'ledger reconcile', discrepancies: problems.length }, `ledger reconcile found ${problems.length} discrepancies`);
    }
    return problems.length === 0 ? 0 : 1;
  },
  'keys create': async (app, args) => {
    const scopes = (args.flags.get('scopes') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const parsed = z.array(scopeSchema).min(1).safeParse(scopes);
    if (!parsed.success) throw new UsageError(`--scopes: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    print(await app.get(ApiKeysService).create(parsed.data, args.flags.get('name') ?? null, ACTOR));
    return 0;
  },
  'events archive': async (app, args) => {
    const month = args.positional[2];
    if (!month || !/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('events archive needs the month, YYYY-MM');
    try {
      const archived = await archiveEventMonth(app.get(DataSource), app.get(AuditService), month, new Date());
      print(archived);
      progress(`detached ${archived.partition}: dump it (pg_dump --table=${archived.partition}), then DROP TABLE ${archived.partition}`);
      return 0;
    } catch (error) {
      if (!(error instanceof ArchiveRefused)) throw error;
      log.error({ command: 'events archive', month }, error.message);
      return 1;
    }
  },
  'keys revoke': async (app, args) => {
    const id = args.positional[2];
    if (!id) throw new UsageError('keys revoke needs the key id');
    try {
      print(await app.get(ApiKeysService).revoke(id, ACTOR));
    } catch (error) {
      if ((error as { code?: string }).code === 'DL_BILLING_NOT_FOUND') throw new UsageError(`keys revoke: no API key ${id}`);
      throw error;
    }
    return 0;
  },
  reconcile: seatReconciliation,
  ...reportCommands(),
};

/** A step of a long command, logged as it happens. */
const progress = (message: string): void => {
  log.info({ command: running }, message);
};

async function readReport(reports: ReportsService, name: ReportName, query: Record<string, string>, now: Date): Promise<Report> {
  switch (name) {
    case 'usage': {
      const q = parseReportQuery('usage', query, now);
      progress(`usage by ${q.groupBy} over [${q.period.from.toISOString()}, ${q.period.to.toISOString()}): reading the rollups`);
      return reports.usage(q.period, q.groupBy);
    }
    case 'credits': {
      const q = parseReportQuery('credits', query, now);
      progress(`credits by ${q.groupBy} over [${q.period.from.toISOString()}, ${q.period.to.toISOString()}): reading the ledger entries`);
      return reports.credits(q.period, q.groupBy);
    }
    case 'seats': {
      const q = parseReportQuery('seats', query, now);
      progress('seats: reading Team accounts, members, subscriptions and invoices');
      return reports.seats(q.period, now);
    }
    case 'spend-limits': {
      const q = parseReportQuery('spend-limits', query, now);
      progress('spend-limits: reading alerts and terminate commands');
      return reports.spendLimits(q.period);
    }
    case 'reconciliation': {
      const q = parseReportQuery('reconciliation', query, now);
      progress('reconciliation: reading seat discrepancies and the drift now');
      return reports.reconciliation(q.period, now);
    }
    case 'top-consumers': {
      const q = parseReportQuery('top-consumers', query, now);
      progress(`top ${q.limit} consumers: reading the rollups`);
      return reports.topConsumers(q.period, q.limit);
    }
    case 'ancillary': {
      const q = parseReportQuery('ancillary', query, now);
      progress('ancillary usage: reading the metered snapshots, volumes and egress');
      return reports.ancillary(q.period);
    }
  }
}

async function writeReport(app: INestApplicationContext, name: ReportName, args: Args): Promise<number> {
  const query: Record<string, string> = {};
  for (const [flag, param] of [
    ['from', 'from'],
    ['to', 'to'],
    ['group-by', 'groupBy'],
    ['limit', 'limit'],
  ] as const) {
    const value = args.flags.get(flag);
    if (value !== undefined) query[param] = value;
  }
  const reports = app.get(ReportsService);
  const now = new Date();
  const started = Date.now();
  let report: Report;
  try {
    report = await readReport(reports, name, query, now);
  } catch (error) {
    const findings = (error as { code?: string; findings?: { field: string; message: string }[] }).findings;
    if ((error as { code?: string }).code !== 'DL_BILLING_REQUEST_INVALID') throw error;
    throw new UsageError((findings ?? []).map((f) => `--${f.field === 'groupBy' ? 'group-by' : f.field}: ${f.message}`).join('\n'));
  }
  progress(`${report.items.length} rows in ${Date.now() - started} ms`);
  const out = args.flags.get('out') ?? '-';
  const body = out.endsWith('.json') ? `${JSON.stringify(report, null, 2)}\n` : toCsv(report);
  if (out === '-') {
    process.stdout.write(body);
  } else {
    const file = createWriteStream(out);
    file.end(body);
    await finished(file);
    progress(`written ${out}`);
  }
  return 0;
}

function reportCommands(): Record<`reports ${ReportName}`, Command> {
  return Object.fromEntries(REPORT_NAMES.map((name) => [`reports ${name}`, (app, args) => writeReport(app, name, args)])) as Record<
    `reports ${ReportName}`,
    Command
  >;
}

async function seatReconciliation(app: INestApplicationContext): Promise<number> {
  progress('seat reconciliation: comparing every Team subscription with its active members');
  let result: Awaited<ReturnType<JobsService['run']>>;
  try {
    result = await app.get(JobsService).run('seat-reconciliation');
  } catch (error) {
    if ((error as { code?: string }).code !== 'DL_BILLING_NOT_FOUND') throw error;
    log.error({ command: 'reconcile' }, 'the seat-reconciliation job is not registered in this build (the Stripe module provides it)');
    return 2;
  }
  print(result);
  progress(result.ran ? 'done' : 'another instance is running it: nothing done');
  return 0;
}

/**
 * The context a command needs: reports add their module; reconcile the whole service, without its
 * schedules, its Kafka consumers (they would join the running service's group and take partitions
 * from it) and its metrics listener (the service's METRICS_PORT is taken where it runs). What the job
 * enqueues stays in the outbox for the service's relay. Kafka is left out on purpose: no warning
 * that it is not configured.
 */
function moduleFor(name: string): DynamicModule {
  if (name.startsWith('reports ')) return ReportsCliModule.forRoot();
  if (name === 'reconcile') {
    const config = cliConfig();
    // As the service: the configuration files read once, every bad one named.
    return AppModule.forRoot(
      { ...config, cronEnabled: false, kafka: undefined, kafkaLeftOut: true, metricsListener: undefined },
      readConfigFiles(config.files),
    );
  }
  return CliModule.forRoot();
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || error.name;
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/**
 * With DATABASE_URL set, one connection attempt bounded by DATABASE_CONNECT_TIMEOUT_MS: an
 * unreachable database is reported in seconds, not after TypeORM's retries. A configuration error
 * is left to the command's own start, which reports it as one (exit 2).
 */
async function databaseUnreachable(): Promise<{ database: string; timeoutMs: number; reason: string } | null> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch {
    return null;
  }
  const { url, connectTimeoutMs } = config.database;
  if (!url) return null;
  try {
    await assertDatabaseReachable(url, connectTimeoutMs);
    return null;
  } catch (error) {
    return { database: databaseAddress(url), timeoutMs: connectTimeoutMs, reason: describe(error) };
  }
}

/**
 * Runs one command: the database checked reachable first (exit 3 in seconds, not after TypeORM's
 * retries), then the context the command needs, each query with the long bound.
 */
export async function runCommand(name: CommandName, args: Args): Promise<number> {
  const command = COMMANDS[name];
  running = name;
  // The framework's lines: warnings and errors only.
  const logger = log.child({}, { level: 'warn' });
  const unreachable = await databaseUnreachable();
  if (unreachable) {
    logger.error(
      { command: name, ...unreachable },
      `could not run ${name}: the database at ${unreachable.database} could not be reached (${unreachable.reason})`,
    );
    return 3;
  }
  // Without DATABASE_URL, the embedded PostgreSQL of a service running on EMBEDDED_PG_DIR is used as it is.
  EmbeddedPostgres.attachToRunning = true;
  let app: INestApplicationContext | undefined;
  try {
    app = await NestFactory.createApplicationContext(moduleFor(name), {
      logger: new PinoLogger(logger, true),
      // A failure to start (database unreachable) is this function's to report, as exit code 3.
      abortOnError: false,
    });
    // An operator's command reads and writes over many rows: each query has DATABASE_LONG_QUERY_TIMEOUT_MS.
    const ready = app;
    return await withQueryBound('long', () => command(ready, args));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n${usageOf(name)}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      logger.error({ command: name }, `could not run ${name}: ${error.message}`);
      return 2;
    }
    const body = (error as { toBody?: () => unknown }).toBody?.();
    const reason = body ? JSON.stringify(body) : describe(error);
    logger.error({ command: name, reason }, `could not run ${name}: ${reason}`);
    return 3;
  } finally {
    await app?.close().catch(() => undefined);
  }
}
