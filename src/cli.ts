import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { z } from 'zod';
import { ApiKeysService } from './accounts/auth/api-keys.service';
import { scopeSchema } from './accounts/auth/scopes';
import { AuditService } from './audit/audit.service';
import { CliModule } from './cli.module';
import { ConfigError } from './common/config/config';
import { LedgerService } from './ledger/ledger.service';

/**
 * Operator commands, run on the build: `node dist/src/cli.js <command>` (or `npm run cli -- <command>`).
 * Exit codes: 0 done, 1 a check found a problem, 2 usage or configuration error.
 */
const USAGE = `usage: cli <command>
  audit verify                              walk every audit hash chain; exit 1 and print the first broken or missing row
  ledger reconcile [--account <id>]         check stored balances against the entries; exit 1 on any discrepancy
  keys create --scopes <a,b,...> [--name n] create an API key (the key is printed once)
  keys revoke <id>                          revoke an API key`;

const ACTOR = 'cli';

type Command = (app: INestApplicationContext, args: Args) => Promise<number>;

interface Args {
  positional: string[];
  flags: Map<string, string>;
}

class UsageError extends Error {}

export function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
    } else {
      positional.push(arg);
    }
  }
  return { positional, flags };
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
};

const COMMANDS: Record<string, Command> = {
  'audit verify': async (app) => {
    const result = await app.get(AuditService).verify();
    print(result);
    if (!result.ok) {
      process.stderr.write(`audit log broken at chain ${result.problem.chain} seq ${result.problem.seq}: ${result.problem.reason} (${result.problem.detail})\n`);
    }
    return result.ok ? 0 : 1;
  },
  'ledger reconcile': async (app, args) => {
    const problems = await app.get(LedgerService).reconcile(args.flags.get('account'));
    print({ ok: problems.length === 0, discrepancies: problems });
    return problems.length === 0 ? 0 : 1;
  },
  'keys create': async (app, args) => {
    const scopes = (args.flags.get('scopes') ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    const parsed = z.array(scopeSchema).min(1).safeParse(scopes);
    if (!parsed.success) throw new UsageError(`--scopes: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    print(await app.get(ApiKeysService).create(parsed.data, args.flags.get('name') ?? null, ACTOR));
    return 0;
  },
  'keys revoke': async (app, args) => {
    const id = args.positional[2];
    if (!id) throw new UsageError('keys revoke needs the key id');
    print(await app.get(ApiKeysService).revoke(id, ACTOR));
    return 0;
  },
};

export async function main(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const name = args.positional.slice(0, 2).join(' ');
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`${name ? `unknown command: ${name}\n` : ''}${USAGE}\n`);
    return 2;
  }
  let app: INestApplicationContext | undefined;
  try {
    app = await NestFactory.createApplicationContext(CliModule.forRoot(), { logger: ['error', 'warn'] });
    return await command(app, args);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    const body = (error as { toBody?: () => unknown }).toBody?.();
    process.stderr.write(`${body ? JSON.stringify(body) : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  } finally {
    await app?.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
}
