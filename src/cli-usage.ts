import { REPORT_NAMES, type ReportName } from './reports/report-names';

/**
 * The CLI's words: its commands, their usage and its exit codes. Kept apart from the commands
 * (cli-commands.ts) so that `--help` and a usage error answer without loading the service.
 */
export const EXIT_CODES =
  'exit codes: 0 done, 1 a check found a problem, 2 usage or configuration error, 3 could not run (e.g. database unreachable)';
export const USAGE = `usage: cli <command>
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

export type CommandName =
  'audit verify' | 'ledger reconcile' | 'keys create' | 'keys revoke' | 'events archive' | 'reconcile' | `reports ${ReportName}`;

export const COMMAND_NAMES: readonly CommandName[] = [
  'audit verify',
  'ledger reconcile',
  'keys create',
  'keys revoke',
  'events archive',
  'reconcile',
  ...REPORT_NAMES.map((name) => `reports ${name}` as const),
];

export function isCommand(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

export interface Args {
  positional: string[];
  flags: Map<string, string>;
}

/** A command line that names no command, or a command given what it cannot take: exit 2 with its usage. */
export class UsageError extends Error {}

/** The usage lines of one command (`audit verify`, `reports usage`…) or group (`keys`), or every command's. */
export function usageOf(name: string): string {
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

/** Why the words given name no command: none given, a group without its command, or an unknown one. */
export function whatIsWrong(words: string[]): string {
  if (words.length === 0) return 'a command is needed';
  const group = COMMAND_NAMES.filter((c) => c.startsWith(`${words[0]} `));
  if (words.length === 1 && group.length > 0) {
    return `${words[0]} needs one of: ${group.map((c) => c.slice(words[0]!.length + 1)).join(', ')}`;
  }
  return `unknown command: ${words.slice(0, 2).join(' ')}`;
}
