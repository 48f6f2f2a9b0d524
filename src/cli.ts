import { parseArgs as parseArgsOfNode } from 'node:util';
import { EXIT_CODES, USAGE, UsageError, isCommand, usageOf, whatIsWrong, type Args } from './cli-usage';

/**
 * Operator commands, run on the build: `node dist/src/cli.js <command>` (or `npm run cli -- <command>`).
 * The command line is read here; the service's code (cli-commands.ts) is loaded only to run a
 * command, so `--help` and a usage error answer at once.
 */

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
  if (!isCommand(name)) {
    process.stderr.write(`${whatIsWrong(args.positional)}\n${USAGE}\n${EXIT_CODES}\n`);
    return 2;
  }
  const { runCommand } = await import('./cli-commands.js');
  return runCommand(name, args);
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
