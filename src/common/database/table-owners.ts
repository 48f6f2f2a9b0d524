/**
 * The one module that writes each table (INSERT, UPDATE, DELETE, COPY, TRUNCATE): another module asks
 * the owner, through one of its methods, and never writes the table itself. Each owner says so at the
 * top of its module file (`Owns: …`); table-owners.spec.ts checks every SQL write under src/ against
 * this map, and the module files' statements against it.
 */
export const TABLE_OWNERS = {
  accounts: 'accounts',
  api_keys: 'accounts',
  api_key_accounts: 'accounts',
  auth_failures: 'accounts',
  wallets: 'ledger',
  grants: 'ledger',
  holds: 'ledger',
  hold_allocations: 'ledger',
  ledger_transactions: 'ledger',
  ledger_entries: 'ledger',
  ledger_months: 'ledger',
  audit_log: 'audit',
  audit_chains: 'audit',
  outbox: 'messaging',
  inbox: 'messaging',
  notifications_sent: 'messaging',
  runtime_commands: 'messaging',
  runtimes: 'metering',
  runtime_events: 'metering',
  event_month_archives: 'metering',
  reservation_extensions: 'metering',
  ancillary_events: 'ancillary',
  ancillary_items: 'ancillary',
  ancillary_charges: 'ancillary',
  ancillary_commands: 'ancillary',
  account_members: 'members',
  account_member_events: 'members',
  account_seats: 'members',
  spend_limits: 'spend-limits',
  spend_limit_alerts: 'spend-limits',
  stripe_subscriptions: 'stripe',
  stripe_invoices: 'stripe',
  stripe_top_ups: 'stripe',
  stripe_webhook_events: 'stripe',
  stripe_seat_discrepancies: 'stripe',
  stripe_seat_changes: 'stripe',
  stripe_seat_pushes: 'stripe',
  usage_rollups: 'reports',
  usage_daily_rollups: 'reports',
  usage_monthly_rollups: 'reports',
  usage_account_hourly_rollups: 'reports',
  usage_account_daily_rollups: 'reports',
  usage_account_monthly_rollups: 'reports',
  job_runs: 'jobs',
} as const satisfies Record<string, string>;

export type OwnedTable = keyof typeof TABLE_OWNERS;
