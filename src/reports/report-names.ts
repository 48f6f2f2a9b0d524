/** The reports and their groupings: the vocabulary of the routes, the CLI's usage and the report queries. */
export const REPORT_NAMES = ['usage', 'credits', 'seats', 'spend-limits', 'reconciliation', 'top-consumers', 'ancillary'] as const;
export type ReportName = (typeof REPORT_NAMES)[number];

export const USAGE_GROUPS = ['account', 'environment', 'day', 'user'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
export const CREDIT_GROUPS = ['total', 'day', 'account'] as const;
export type CreditGroup = (typeof CREDIT_GROUPS)[number];
