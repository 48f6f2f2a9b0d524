import 'reflect-metadata';
import { createLogger, PinoLogger } from './common/logging/logger';
import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { createWriteStream } from 'node:fs';
import { parseArgs as parseArgsOfNode } from 'node:util';
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
import { REPORT_NAMES, ReportsService, type Report, type ReportName } from './reports/reports.service';
import { toCsv } from './reports/to-csv';

/**
 * Operator commands, run on the build: `node dist/src/cli.js <command>` (or `npm run cli -- <command>`).
 * Exit codes (EXIT_CODES): 0 done, 1 a check found a problem, 2 usage or configuration error,
 * 3 could not run (database unreachable, any unexpected failure).
 */
const EXIT_CODES =
  'exit codes: 0 done, 1 a check found a problem, 2 usage or configuration error, 3 could not run (e.g. database unreachable)';
const USAGE = `usage: cli <command>
  audit verify                              walk every audit hash chain; exit 1 and print the first broken or missing row
  ledger reconcile [--account <id>]         check stored balances against the entries; exit 1 on any discrepancy
  keys create --scopes <a,b,...> [--name n] create an API key (the key is printed once)
  keys revoke <id>                          revoke an API key
  reports <name> [--from t] [--to t] [--group-by g] [--limit n] [--out file.csv]
                                            write a report (${REPORT_NAMES.join(', ')}) as CSV
                                            (--out -: stdout; a .json file name writes JSON); period: this month by default
  reconcile                                 run the seat-reconciliation job now (Stripe quantity vs active members)
  events archive <YYYY-MM>                  detach a settled runtime month's events (then dump and drop the table it names);
                                            exit 1 if the month is recent or has a runtime not settled`;

const ACTOR = 'cli';

type Command = (app: INestApplicationContext, args: Args) => Promise<number>;

interface Args {
  positional: string[];
  flags: Map<string, string>;
}

class UsageError extends Error {}

/** Every option of every command (node:util.parseArgs, strict: an unknown option is a usage error). */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  account: { type: 'string' },
  scopes: { type: 'string' },
  name: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  'group-by': { type: 'string' },
  limit: { type: 'string' },
  out: { type: 'string' },
} as const;

export function parseArgs(argv: string[]): Args & { help: boolean } {
  let parsed: ReturnType<typeof parseArgsOf>;
  try {
    parsed = parseArgsOf(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const flags = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed.values)) if (typeof value === 'string') flags.set(name, value);
  return { positional: parsed.positionals, flags, help: parsed.values.help === true };
}

function parseArgsOf(argv: string[]) {
  return parseArgsOfNode({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

/** The usage lines of one command (`audit verify`, `reports usage`…) or group (`keys`), or every command's. */
function usageOf(name: string): string {
  const head = name.startsWith('reports ') ? 'reports' : name;
  const own: string[] = [];
  let taking = false;
  for (const l of USAGE.split('\n').slice(1)) {
    // A line indented further continues the command above it.
    if (/^\s{20,}/.test(l)) {
      if (taking) own.push(l);
      continue;
    }
    const command = l.trim();
    taking = head !== '' && (command === head || command.startsWith(`${head} `));
    if (taking) own.push(l);
  }
  if (own.length === 0) return `${USAGE}\n${EXIT_CODES}`;
  return `usage: cli ${own.map((l) => l.trim()).join('\n  ')}\n${EXIT_CODES}`;
}

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

const COMMANDS: Record<string, Command> = {
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

for (const name of REPORT_NAMES) COMMANDS[`reports ${name}`] = (app, args) => writeReport(app, name, args);

COMMANDS.reconcile = async (app) => {
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
};

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

/** Why the words given name no command: none given, a group without its command, or an unknown one. */
function whatIsWrong(words: string[]): string {
  if (words.length === 0) return 'a command is needed';
  const group = Object.keys(COMMANDS).filter((c) => c.startsWith(`${words[0]} `));
  if (words.length === 1 && group.length > 0) {
    return `${words[0]} needs one of: ${group.map((c) => c.slice(words[0]!.length + 1)).join(', ')}`;
  }
  return `unknown command: ${words.slice(0, 2).join(' ')}`;
}

export async function main(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n${EXIT_CODES}\n`);
    return 2;
  }
  const name = args.positional[0] === 'reconcile' ? 'reconcile' : args.positional.slice(0, 2).join(' ');
  if (args.help) {
    process.stdout.write(`${usageOf(name)}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`${whatIsWrong(args.positional)}\n${USAGE}\n${EXIT_CODES}\n`);
    return 2;
  }
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

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(3);
    },
  );
}
