// Generated from docs/openapi.json by `npm run openapi` (openapi-typescript); do not edit.
export interface paths {
    "/health/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness
         * @description No API key needed.
         */
        get: operations["live"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: 200 when the database answers; Kafka is reported in the body but does not fail it
         * @description No API key needed.
         */
        get: operations["ready"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics (behind METRICS_BEARER_TOKEN when it is set; on METRICS_PORT instead when that is set)
         * @description No API key needed.
         */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create or update an account
         * @description API key scopes: `admin` or `control-plane`.
         */
        post: operations["upsertAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The ledger, newest first, each entry explaining itself
         * @description Pass `nextCursor` as `cursor` for the next page.
         *
         *     API key scopes: `admin` or `control-plane` or `account:{id}` (the account in the path).
         */
        get: operations["getLedger"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An account's members and its seat count (active members)
         * @description API key scopes: `admin` or `control-plane` or `reports` or `account:{id}` (the account in the path).
         */
        get: operations["listMembers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/members/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Add a member (a seat)
         * @description API key scopes: `admin` or `control-plane`.
         */
        put: operations["addMember"];
        post?: never;
        /**
         * Remove a member (a seat)
         * @description API key scopes: `admin` or `control-plane`.
         */
        delete: operations["removeMember"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/spend-limit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The account's (or a member's, with userId) spend limit and this month's spend
         * @description API key scopes: `admin` or `control-plane` or `reports` or `account:{id}` (the account in the path).
         */
        get: operations["getSpendLimit"];
        /**
         * Set the account's (or a member's) monthly spend limit and alert thresholds
         * @description A limit lowered below what is already spent or held tells every active runtime in its scope to terminate (reason `spend_limit`).
         *
         *     API key scopes: `admin` or `account:{id}` (the account in the path).
         */
        put: operations["setSpendLimit"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/statements/{period}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An account's statement for a calendar month
         * @description Opening balance, every ledger movement of the month in lines (included credits, grants, top-ups, runtime charges by environment and size class/GPU, ancillary charges by kind, expiries, claw-backs), unpriced ancillary usage with what the plan includes, the closing balance (opening + Σ lines, equal to the ledger entries), and for Team the fees Stripe invoiced in dollars. JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `control-plane` or `reports` or `account:{id}` (the account in the path).
         */
        get: operations["getStatement"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/subscription": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The account's plan, seats and Stripe subscription
         * @description API key scopes: `admin` or `control-plane` or `reports` or `account:{id}` (the account in the path).
         */
        get: operations["getSubscription"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/top-ups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a top-up: a Stripe Checkout Session for the pack
         * @description API key scopes: `admin` or `account:{id}` (the account in the path).
         */
        post: operations["startTopUp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Billable usage by runtime, environment, day or user
         * @description Usage in [from, to) (default: this calendar month), dated as the statement: runtimes (and their running time) first settled in the period, the charges and corrections posted in it, and the charges so far of runtimes active now when now is in it. JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `control-plane` or `reports` or `account:{id}` (the account in the path).
         */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/accounts/{id}/wallet": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The wallet: balances, grants in burn order, this period's spend and runs
         * @description API key scopes: `admin` or `control-plane` or `account:{id}` (the account in the path).
         */
        get: operations["getWallet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/accounts/{id}/grants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Grant credits to an account
         * @description With an `Idempotency-Key` header the same request again returns the same grant (200) and a different one is a 409; without one, every call grants.
         *
         *     API key scopes: `admin`.
         */
        post: operations["createGrant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/accounts/{id}/plan": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An account's plan, overrides, effective terms and current period
         * @description API key scopes: `admin`.
         */
        get: operations["getAccountPlan"];
        /**
         * Set an account's plan and its overrides (Enterprise terms), audited
         * @description API key scopes: `admin`.
         */
        put: operations["setAccountPlan"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/accounts/{id}/subscription": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create the account's Team subscription in Stripe (base fee and seats) and move it to Team
         * @description API key scopes: `admin`.
         */
        post: operations["createSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/accounts/{id}/suspension": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Suspend an account (no new launches, runtimes terminated) or reactivate it
         * @description Places or lifts an admin's suspension; with `cause: non_payment` and `suspended: false`, waives a suspension for non-payment (audited as `account.reactivated` with that cause). An account stays suspended while another cause holds it.
         *
         *     API key scopes: `admin`.
         */
        put: operations["setSuspension"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create an API key (the key is shown once)
         * @description API key scopes: `admin`.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/api-keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description API key scopes: `admin`.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/jobs/{job}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a scheduled job now, under the same advisory lock as its schedule (audited as job.run)
         * @description API key scopes: `admin`.
         */
        post: operations["runJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/reconciliation/discrepancies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Seat discrepancies found: quantity drift corrected by reconciliation, invoices billed for other seats
         * @description API key scopes: `admin` or `reports`.
         */
        get: operations["listSeatDiscrepancies"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/reconciliation/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run seat reconciliation now (same lock as the seat-reconciliation job)
         * @description API key scopes: `admin`.
         */
        post: operations["runReconciliation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/admin/runtimes/{runtimeId}/terminate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Tell a runtime to terminate (reason admin), audited; asking again while the command is open issues none
         * @description API key scopes: `admin`.
         */
        post: operations["terminateRuntime"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit log, newest first: who, what, when, account, before/after, correlation id, hash chain
         * @description API key scopes: `admin` or `reports`.
         */
        get: operations["listAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Lifecycle events: one event, an array of events, or {events: [...]}
         * @description The same events, handler and idempotency (on `id`) as the Kafka topic `runtime.lifecycle.v1`. All or nothing: a request with an invalid event applies none, and every finding names the event by its place (`events[3].seq`).
         *
         *     API key scopes: `admin` or `control-plane`.
         */
        post: operations["postEvents"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/ancillary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Ancillary usage by account and kind: snapshots, volumes, egress; priced or unpriced
         * @description Usage metered in [from, to) (storage hours, egress reports): quantity, credits due, charged and unpaid. JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["ancillaryReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Credits flow: granted, top-ups, clawed back, consumed, refunded, expired
         * @description groupBy total, day or account. JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["creditsReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/reconciliation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Seat discrepancies between Stripe and the members table
         * @description JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["reconciliationReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/seats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Team accounts: active seats, Stripe quantity, expected and invoiced recurring revenue
         * @description JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["seatsReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/spend-limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Spend-limit notifications and runtime terminations
         * @description JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["spendLimitsReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/top-consumers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The accounts that consumed the most credits
         * @description from and to are whole UTC hours; limit defaults to 10. JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["topConsumersReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reports/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Settled usage by account, environment, day or user
         * @description from and to are whole UTC hours. JSON, or CSV with `format=csv` or `Accept: text/csv`.
         *
         *     API key scopes: `admin` or `reports`.
         */
        get: operations["usageReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reservations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Authorize a launch and deduct its time reservation up front
         * @description Checks, in order: request valid, account exists and is active, plan allows it, runs quota, agents quota, concurrency, spend limit, credits. Idempotent on `runtimeId`: the same body again returns the same reservation (200); a different body is a 409 whose findings name each field that differs (`minutes`: "reserved with 30, sent 45"; a field absent on one side is said to be absent).
         *
         *     API key scopes: `admin` or `control-plane`.
         */
        post: operations["createReservation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reservations/{runtimeId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A reservation: status, running time, charge, release, intervals and the commands sent
         * @description Any valid API key (what it may see is checked per object).
         */
        get: operations["getReservation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reservations/{runtimeId}/extend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add minutes to a reservation
         * @description The `Idempotency-Key` header is required: the same key again adds nothing and returns the reservation as it is now (the same minutes and amount reserved; its status and expiresAt as they are by then); a different request under it is a 409 with a finding on `minutes` (the minutes the key extended by, and those sent).
         *
         *     API key scopes: `admin` or `control-plane`.
         */
        post: operations["extendReservation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stripe/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stripe webhook endpoint
         * @description The `Stripe-Signature` header is checked on the raw body; too many bad signatures from one client get 429. Each event is applied once (on `event.id`).
         *
         *     No API key needed.
         */
        post: operations["stripeWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Account: {
            /** Format: date-time */
            createdAt: string;
            id: string;
            /** @enum {string} */
            kind: "user" | "organization";
            name: string | null;
            /** @description A plan id of the plans file (as shipped: free, team, enterprise) */
            plan: string;
            /** @enum {string} */
            status: "active" | "suspended";
            /** @description What holds the account suspended: an admin, non-payment (lifted when the invoice is paid), or both; empty: active */
            suspendedFor: ("admin" | "non_payment")[];
            /** Format: date-time */
            updatedAt: string;
        };
        AccountPlan: {
            accountId: string;
            /** Format: date-time */
            billingCycleAnchor: string | null;
            /** @description The defaults with the overrides on top */
            effective: {
                /** @description null: unlimited */
                agentsPerPeriod: number | null;
                /** @description null: unlimited */
                concurrentRuntimes: number | null;
                gpus: boolean;
                /** @description A plan id of the plans file (as shipped: free, team, enterprise) */
                id: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                includedCredits: string;
                name: string;
                /** @enum {string} */
                period: "calendar_month" | "billing_cycle";
                /** @description null: unlimited */
                runsPerPeriod: number | null;
                sizeClasses: ("small" | "medium" | "large" | "gpu-small" | "gpu-large")[];
                topUps: boolean;
            };
            /** @description The overrides as set (any field of the plan terms) */
            overrides: {
                [key: string]: unknown;
            } | null;
            period: {
                /** Format: date-time */
                from: string;
                /** Format: date-time */
                to: string;
            };
            /** @description A plan id of the plans file (as shipped: free, team, enterprise) */
            plan: string;
        };
        AncillaryReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            items: components["schemas"]["AncillaryReportRow"][];
            /** @description How to read the figures */
            notes: string[];
            /** @enum {string} */
            report: "ancillary";
            /** Format: date-time */
            to: string;
            totals: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                amount: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                charged: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                unpaid: string;
            };
        };
        /** @description Ancillary usage of one account and kind metered in the period */
        AncillaryReportRow: {
            account: string;
            /**
             * @description Due for this usage
             * @example 12.500000
             */
            amount: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            charged: string;
            /** @enum {string} */
            kind: "snapshot" | "volume" | "egress" | "paused_ram";
            /** @description false: metered while its rate-card item is unpriced, not charged */
            priced: boolean;
            /** @description In `unit`, 6 decimals (rounded up) */
            quantity: string;
            /** @description GiB-month (storage, 730 hours), GiB (egress) or GiB-hour (paused memory) */
            unit: string;
            /**
             * @description Due but not yet paid (the wallet could not pay it)
             * @example 12.500000
             */
            unpaid: string;
        };
        /** @description Ancillary usage of one kind metered in the period (storage hours and egress reports in it) */
        AncillaryUsage: {
            /**
             * @description Due for this usage
             * @example 12.500000
             */
            amount: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            charged: string;
            /** @enum {string} */
            kind: "snapshot" | "volume" | "egress" | "paused_ram";
            /** @description false: metered while its rate-card item is unpriced, not charged */
            priced: boolean;
            /** @description In `unit`, 6 decimals (rounded up) */
            quantity: string;
            rateCardVersions: string[];
            /** @description GiB-month (storage, 730 hours), GiB (egress) or GiB-hour (paused memory) */
            unit: string;
            /**
             * @description Due but not yet paid (the wallet could not pay it)
             * @example 12.500000
             */
            unpaid: string;
        };
        /** @description `snapshot.created` `{snapshotId, sizeBytes}`, `snapshot.deleted` `{snapshotId}`, `volume.created` / `volume.resized` `{volumeId, sizeGiB}`, `volume.deleted` `{volumeId}`, `egress.reported` `{bytes, from, to}` (with `runtimeId`). Same id dedup as lifecycle events. */
        AncillaryUsageEvent: {
            accountId: string;
            /** @default {} */
            data: {
                [key: string]: unknown;
            };
            id: string;
            /** Format: date-time */
            occurredAt: string;
            runtimeId?: string;
            /** @default 0 */
            seq: number;
            /** @enum {string} */
            type: "snapshot.created" | "snapshot.deleted" | "volume.created" | "volume.resized" | "volume.deleted" | "egress.reported";
        };
        AuditPage: {
            items: components["schemas"]["AuditRow"][];
            nextCursor: string | null;
        };
        AuditRow: {
            accountId: string | null;
            action: string;
            /** @description Who: `key:<id>` of the API key, `system`, `stripe`, `kafka`, … */
            actor: string;
            /** @description The state after (JSON) */
            after?: unknown;
            /** Format: date-time */
            at: string;
            /** @description The state before (JSON), null for a creation */
            before?: unknown;
            chain: string;
            correlationId: string | null;
            hash: string;
            id: string;
            prevHash: string;
            seq: number;
        };
        Balance: {
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            available: string;
            /**
             * @description Charges no grant could cover
             * @example 12.500000
             */
            debt: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            held: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            total: string;
        };
        CreatedApiKey: {
            id: string;
            /** @description The secret, shown this once (only its hash is stored) */
            key: string;
            name: string | null;
            scopes: string[];
        };
        CreditsReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            /** @enum {string} */
            groupBy: "total" | "day" | "account";
            items: {
                account?: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                clawedBack: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                consumed: string;
                /** @description A UTC day, YYYY-MM-DD */
                day?: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                expired: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                granted: string;
                /**
                 * @description granted + topUps − clawedBack − consumed + refunded − expired
                 * @example 12.500000
                 */
                net: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                refunded: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                topUps: string;
            }[];
            /** @description How to read the figures */
            notes: string[];
            /** @enum {string} */
            report: "credits";
            /** Format: date-time */
            to: string;
            totals: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                clawedBack: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                consumed: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                expired: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                granted: string;
                /**
                 * @description granted + topUps − clawedBack − consumed + refunded − expired
                 * @example 12.500000
                 */
                net: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                refunded: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                topUps: string;
            };
        };
        /** @description Every error: a DL_BILLING_* code, a message, every finding, and detail fields where the code has some */
        ErrorBody: {
            error: {
                /**
                 * @description DL_BILLING_INSUFFICIENT_CREDITS: the available balance
                 * @example 12.500000
                 */
                available?: string;
                /** @enum {string} */
                code: "DL_BILLING_REQUEST_INVALID" | "DL_BILLING_UNAUTHENTICATED" | "DL_BILLING_FORBIDDEN" | "DL_BILLING_NOT_FOUND" | "DL_BILLING_INSUFFICIENT_CREDITS" | "DL_BILLING_SPEND_LIMIT_REACHED" | "DL_BILLING_PLAN_FORBIDS" | "DL_BILLING_ACCOUNT_SUSPENDED" | "DL_BILLING_QUOTA_EXCEEDED" | "DL_BILLING_IDEMPOTENCY_CONFLICT" | "DL_BILLING_CAPABILITY_UNSUPPORTED" | "DL_BILLING_STRIPE_SIGNATURE_INVALID" | "DL_BILLING_METHOD_NOT_ALLOWED" | "DL_BILLING_REQUEST_TIMEOUT" | "DL_BILLING_PAYLOAD_TOO_LARGE" | "DL_BILLING_UNSUPPORTED_MEDIA_TYPE" | "DL_BILLING_RATE_LIMITED" | "DL_BILLING_HEADERS_TOO_LARGE" | "DL_BILLING_UNAVAILABLE" | "DL_BILLING_INTERNAL";
                findings?: components["schemas"]["Finding"][];
                /**
                 * @description DL_BILLING_SPEND_LIMIT_REACHED: open holds in the period
                 * @example 12.500000
                 */
                held?: string;
                /** @description DL_BILLING_QUOTA_EXCEEDED: the quota (a count); DL_BILLING_SPEND_LIMIT_REACHED: the limit (credits) */
                limit?: number | string;
                message: string;
                /**
                 * @description DL_BILLING_QUOTA_EXCEEDED: the quota reached
                 * @enum {string}
                 */
                quota?: "runs" | "agents" | "concurrency";
                /**
                 * @description DL_BILLING_SPEND_LIMIT_REACHED: what the limit still allows
                 * @example 12.500000
                 */
                remaining?: string;
                /**
                 * @description DL_BILLING_INSUFFICIENT_CREDITS, DL_BILLING_SPEND_LIMIT_REACHED: what the request needs
                 * @example 12.500000
                 */
                required?: string;
                /** @description DL_BILLING_IDEMPOTENCY_CONFLICT: the reservation the runtime id already has */
                reservationId?: string;
                /**
                 * Format: date-time
                 * @description DL_BILLING_QUOTA_EXCEEDED, DL_BILLING_SPEND_LIMIT_REACHED: when the quota or the limit resets
                 */
                resetsAt?: string;
                /** @description DL_BILLING_RATE_LIMITED: when to try again */
                retryAfterSeconds?: number;
                /** @description DL_BILLING_SPEND_LIMIT_REACHED: the member whose limit it is (null: the account) */
                scope?: {
                    userId: string;
                } | null;
                /**
                 * @description The Environment specification's own code, on findings (and errors) about the environment
                 * @enum {string}
                 */
                specCode?: "DL_ENV_SPEC_INVALID" | "DL_ENV_CAPABILITY_UNSUPPORTED";
                /**
                 * @description DL_BILLING_SPEND_LIMIT_REACHED: settled charges in the period
                 * @example 12.500000
                 */
                spent?: string;
                /** @description DL_BILLING_QUOTA_EXCEEDED: how much of the quota is used */
                used?: number;
            };
        };
        /** @description One event, an array of events, or `{events: [...]}` */
        EventsRequest: components["schemas"]["LifecycleEvent"] | components["schemas"]["AncillaryUsageEvent"] | (components["schemas"]["LifecycleEvent"] | components["schemas"]["AncillaryUsageEvent"])[] | {
            events: (components["schemas"]["LifecycleEvent"] | components["schemas"]["AncillaryUsageEvent"])[];
        };
        EventsResult: {
            /** @description Events applied now */
            accepted: number;
            /** @description Events already applied before (same id): nothing done */
            duplicates: number;
        };
        /** @description One problem with the request, named by the field it is in (e.g. `environment.sizeClass`) */
        Finding: {
            field: string;
            message: string;
            /**
             * @description The Environment specification's own code, on findings (and errors) about the environment
             * @enum {string}
             */
            specCode?: "DL_ENV_SPEC_INVALID" | "DL_ENV_CAPABILITY_UNSUPPORTED";
        };
        Grant: {
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            amount: string;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            expiresAt: string | null;
            id: string;
            priority: number;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            remaining: string;
            /** @enum {string} */
            source: "plan_allowance" | "top_up" | "admin" | "promotion";
        };
        GrantResult: {
            balance: components["schemas"]["Balance"];
            grant: components["schemas"]["Grant"];
            transactionId: string;
        };
        JobResult: {
            job: string;
            /** @enum {boolean} */
            ran: true;
            /** @description The job's own summary (JSON) */
            result?: unknown;
            /** @description The run id: the correlation id of every audit row the run writes */
            runId: string;
        } | {
            job: string;
            /** @enum {boolean} */
            ran: false;
            reason: string;
            runId: string;
        };
        LedgerEntry: {
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            amount: string;
            /** Format: date-time */
            at: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            availableAfter: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            balanceAfter: string;
            explanation: string;
            grantId: string | null;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            heldAfter: string;
            holdId: string | null;
            id: string;
            /** @description reservation, settlement, grant, expiry, top-up, adjustment, … */
            kind: string;
            reference: string | null;
        };
        LedgerPage: {
            items: components["schemas"]["LedgerEntry"][];
            nextCursor: string | null;
        };
        /** @description `runtime.terminated` needs `data.reason` (one of user, culled, expired, anomaly, unreachable, spend_limit, admin, reservation_expired, account_suspended, unreserved); `runtime.launch_failed` needs a `data.reason` string. `occurredAt` is after 2000-01-01 and at most 24 hours ahead. `id` is the dedup key, forever. */
        LifecycleEvent: {
            accountId: string;
            /** @default {} */
            data: {
                [key: string]: unknown;
            };
            id: string;
            /** Format: date-time */
            occurredAt: string;
            runtimeId: string;
            seq: number;
            /** @enum {string} */
            type: "runtime.started" | "runtime.paused" | "runtime.resumed" | "runtime.heartbeat" | "runtime.terminated" | "runtime.launch_failed";
        };
        MemberChange: {
            accountId: string;
            active: boolean;
            /** Format: date-time */
            changedAt: string;
            /** @description Active members after the change */
            seats: number;
            userId: string;
        };
        Members: {
            accountId: string;
            members: {
                active: boolean;
                /** Format: date-time */
                changedAt: string;
                userId: string;
            }[];
            /** @description Active members */
            seats: number;
        };
        Readiness: {
            checks: {
                database: {
                    detail: string;
                    ok: boolean;
                };
                kafka: {
                    detail: string;
                    ok: boolean;
                };
            };
            /** @enum {string} */
            status: "ready" | "not ready";
        };
        ReconciliationReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            items: {
                account: string;
                activeSeats: number;
                /** Format: date-time */
                correctedAt: string | null;
                /** Format: date-time */
                detectedAt: string;
                /** @description stripeQuantity − activeSeats */
                difference: number;
                invoice: string | null;
                kind: string;
                /**
                 * Format: date-time
                 * @description An invoice flag a membership change received later showed wrong: when
                 */
                resolvedAt: string | null;
                stripeQuantity: number;
                subscription: string;
            }[];
            /** @description How to read the figures */
            notes: string[];
            /** @enum {string} */
            report: "reconciliation";
            /** Format: date-time */
            to: string;
            totals: {
                /** @description Rows found in the period that still hold (resolved invoice flags not counted) */
                discrepancies: number;
                openDrift: number;
                /** @description Invoice flags found in the period and resolved since */
                resolved: number;
            };
        };
        Reservation: {
            balance: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                available: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                held: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                total: string;
            };
            /**
             * Format: date-time
             * @description When the reservation runs out (of running time, or of time to start)
             */
            expiresAt: string;
            minutes: number;
            /**
             * @description Credits per hour
             * @example 12.500000
             */
            ratePerHour: string;
            reservationId: string;
            /**
             * @description The hold: rate × minutes
             * @example 12.500000
             */
            reserved: string;
            /** @description Runs left in the plan's period (null: unlimited) */
            runsRemaining: number | null;
            runtimeId: string;
            /** @description sha256: + SHA-256 of the RFC 8785 serialization of the environment spec priced (null on reservations made before it was recorded) */
            specDigest: string | null;
            /** @enum {string} */
            status: "reserved" | "running" | "paused" | "terminating" | "settled" | "voided";
        };
        ReservationDetails: {
            accountId: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            charged: string;
            commands: {
                /** Format: date-time */
                acknowledgedAt: string | null;
                id: string;
                /** Format: date-time */
                issuedAt: string;
                reason: string;
                type: string;
            }[];
            explanation: string;
            /** @description Running intervals (paused time is not charged) */
            intervals: {
                /** Format: date-time */
                from: string;
                /** Format: date-time */
                to: string | null;
            }[];
            minutes: number;
            rateCardVersion: string | null;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            ratePerHour: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            released: string;
            reservationId: string | null;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            reserved: string;
            /** @description Events that contradict the charge, kept for an operator to look at (the charge stands) */
            review: {
                eventId: string;
                /** @enum {string} */
                flag: "launch_failed_contradicted";
                message: string;
                /** Format: date-time */
                occurredAt: string;
                reason: string | null;
            }[];
            runningSeconds: number;
            runtimeId: string;
            /** @description How the runtime was settled (null while it is not) */
            settlement: string | null;
            /** @description sha256: + SHA-256 of the RFC 8785 serialization of the environment spec priced (null on reservations made before it was recorded) */
            specDigest: string | null;
            /** @enum {string} */
            status: "reserved" | "running" | "paused" | "terminating" | "settled" | "voided";
            /** @description The reason its runtime.terminated (or launch failure) gave, as given */
            terminationReason: string | null;
        };
        RevokedApiKey: {
            id: string;
            /** Format: date-time */
            revokedAt: string;
        };
        RuntimeTerminate: {
            accountId: string;
            /** @description false: a terminate command was already open, none issued */
            commandIssued: boolean;
            runtimeId: string;
            status: string;
        };
        SeatDiscrepancies: {
            items: {
                accountId: string;
                activeSeats: number;
                /** Format: date-time */
                correctedAt: string | null;
                /** Format: date-time */
                detectedAt: string;
                id: string;
                invoiceId: string | null;
                kind: string;
                /**
                 * Format: date-time
                 * @description An invoice flag a membership change received later showed wrong (the invoice billed the seats active when it was created): when. Null while the flag holds
                 */
                resolvedAt: string | null;
                /** @description The membership change (event id) that resolved the flag */
                resolvedBy: string | null;
                stripeQuantity: number;
                subscriptionId: string;
            }[];
        };
        SeatsReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            items: {
                account: string;
                /** @description stripeQuantity − seats */
                drift: number | null;
                /** @description USD cents */
                expectedMrrCents: number;
                /** @description USD cents */
                invoicedCents: number;
                invoicesFailed: number;
                invoicesPaid: number;
                name: string | null;
                plan: string;
                seats: number;
                status: string;
                /** @description USD cents */
                stripeMrrCents: number;
                stripeQuantity: number | null;
                subscription: string | null;
                subscriptionStatus: string | null;
            }[];
            /** @description How to read the figures */
            notes: string[];
            /** @enum {string} */
            report: "seats";
            /** Format: date-time */
            to: string;
            totals: {
                /** @description USD cents */
                expectedMrrCents: number;
                /** @description USD cents */
                invoicedCents: number;
                seats: number;
                /** @description USD cents */
                stripeMrrCents: number;
                stripeQuantity: number;
                teams: number;
            };
        };
        SpendLimit: {
            accountId: string;
            /**
             * @description The limit; null: none
             * @example 12.500000
             */
            credits: string | null;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            held: string;
            period: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            remaining: string | null;
            /** @description The member the limit is for; null: the whole account */
            scope: {
                userId: string;
            } | null;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            spent: string;
            /** @description Runtimes told to terminate because the limit is now passed */
            terminated: string[];
            thresholds: number[];
        };
        SpendLimitsReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            items: {
                account: string;
                /** Format: date-time */
                at: string;
                /** @description An alert: threshold or reached; a termination: its reason */
                event: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                limit: string | null;
                runtime: string | null;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                spent: string | null;
                threshold: number | null;
                /** @enum {string} */
                type: "alert" | "termination";
                user: string | null;
            }[];
            /** @description How to read the figures */
            notes: string[];
            /** @enum {string} */
            report: "spend-limits";
            /** Format: date-time */
            to: string;
            /** @description Rows by `<type>:<event>` */
            totals: {
                [key: string]: number;
            };
        };
        Statement: {
            accountId: string;
            /** @description Ancillary usage metered for hours and reports in the period, by kind (charges posted in the period are in `lines`) */
            ancillary: components["schemas"]["AncillaryUsage"][];
            /**
             * @description openingBalance + the credits of every line
             * @example 12.500000
             */
            closingBalance: string;
            /** @description What one credit is worth (the plan catalog): fees are in dollars, everything else in credits */
            creditValue: {
                centsPerCredit: number;
                /** @enum {string} */
                currency: "usd";
            };
            /** @description Team: each invoice whose cycle starts in the period, in US cents as Stripe invoiced it: the base fee and the seat fee (the sums of its lines of each price, prorations included), and its other items (discounts, tax) when there are any, so that they sum to its total */
            fees: {
                amountCents: number;
                description: string;
                invoiceId: string;
                /** Format: date-time */
                periodEnd: string;
                /** Format: date-time */
                periodStart: string;
                status: string;
            }[];
            /** Format: date-time */
            from: string;
            lines: components["schemas"]["StatementLine"][];
            /**
             * @description The balance (total: available + held − debt) at `from`, from the ledger entries before it
             * @example 12.500000
             */
            openingBalance: string;
            /** @description The calendar month, YYYY-MM (UTC) */
            period: string;
            plan: {
                id: string;
                name: string;
            };
            reconciliation: {
                /**
                 * @description Σ of the lines = closingBalance − openingBalance
                 * @example 12.500000
                 */
                movements: string;
                /** @description Ledger transactions posted in the period */
                transactions: number;
            };
            /** Format: date-time */
            to: string;
            /** @description Top-ups bought through Stripe whose credits were granted in the period, with their price in dollars */
            topUps: {
                /** @description What Stripe Checkout charged, in US cents (null when Stripe did not say) */
                amountCents: number | null;
                /** Format: date-time */
                at: string;
                /**
                 * @description Credits granted (in the `top_ups` line of the period)
                 * @example 12.500000
                 */
                credits: string;
                pack: string;
                /** @description The Stripe Checkout Session */
                sessionId: string;
            }[];
        };
        StatementLine: {
            /** @description A quantity in `unit`, with 6 decimals (rounded up) */
            beyondIncluded?: string;
            /** @description Ledger transactions the line sums (runtimes, for runtime lines) */
            count: number;
            /**
             * @description The line's effect on the balance (negative for charges, expiries and claw-backs; 0 for unpriced usage)
             * @example 12.500000
             */
            credits: string;
            description: string;
            /** @description What the plan includes each month (unpriced usage) */
            included?: string;
            /** @description A quantity in `unit`, with 6 decimals (rounded up) */
            quantity?: string;
            rateCardVersions?: string[];
            /** @enum {string} */
            section: "included_credits" | "grants" | "top_ups" | "runtime_charges" | "ancillary_charges" | "other_charges" | "expiries" | "claw_backs" | "unpriced";
            unit?: string;
        };
        /** @description A Stripe event, as Stripe signs it */
        StripeEvent: {
            created: number;
            data: {
                object: {
                    [key: string]: unknown;
                };
            } & {
                [key: string]: unknown;
            };
            id: string;
            type: string;
        } & {
            [key: string]: unknown;
        };
        Subscription: {
            accountId: string;
            /** @enum {string} */
            accountStatus: "active" | "suspended";
            /** Format: date-time */
            billingCycleAnchor: string | null;
            /** @description A plan id of the plans file (as shipped: free, team, enterprise) */
            plan: string;
            /** @description Active members */
            seats: number;
            subscription: {
                currentPeriod: {
                    /** Format: date-time */
                    end: string | null;
                    /** Format: date-time */
                    start: string;
                } | null;
                customerId: string;
                id: string;
                /** Format: date-time */
                pastDueSince: string | null;
                seatQuantity: number | null;
                /** @description Stripe's subscription status */
                status: string;
            } | null;
        };
        Suspension: {
            accountId: string;
            /** @enum {string} */
            status: "active" | "suspended";
            /** @description What holds the account suspended: an admin, non-payment (lifted when the invoice is paid), or both; empty: active */
            suspendedFor: ("admin" | "non_payment")[];
            terminated: string[];
        };
        TopConsumersReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            items: {
                account: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                credits: string;
                name: string | null;
                plan: string | null;
                rank: number;
                runtimes: number;
                /** @description Running time, whole seconds */
                seconds: number;
            }[];
            /** @enum {string} */
            report: "top-consumers";
            /** Format: date-time */
            to: string;
        };
        TopUpCheckout: {
            /** @description Stripe Checkout: the credits come with its completion */
            checkoutUrl: string;
            sessionId: string;
        };
        Usage: {
            accountId: string;
            /** @description Snapshots, volumes and egress metered in [from, to), by kind (not in the CSV) */
            ancillary: components["schemas"]["AncillaryUsage"][];
            /** Format: date-time */
            from: string;
            /** @enum {string} */
            groupBy: "runtime" | "environment" | "day" | "user";
            items: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                credits: string;
                day?: string;
                environment?: string;
                runtime?: string;
                runtimes: number;
                seconds: number;
                user?: string;
            }[];
            /** Format: date-time */
            to: string;
            total: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                credits: string;
                runtimes: number;
                seconds: number;
            };
        };
        UsageReport: {
            /** @description The keys of each item, in order (also the CSV header) */
            columns: string[];
            /** Format: date-time */
            from: string;
            /** @enum {string} */
            groupBy: "account" | "environment" | "day" | "user";
            items: {
                account?: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                credits: string;
                /** @description A UTC day, YYYY-MM-DD */
                day?: string;
                environment?: string;
                runtimes: number;
                /** @description Running time, whole seconds */
                seconds: number;
                user?: string;
            }[];
            /** @description How to read the figures */
            notes: string[];
            /** @enum {string} */
            report: "usage";
            /** Format: date-time */
            to: string;
            totals: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                credits: string;
                runtimes: number;
                /** @description Running time, whole seconds */
                seconds: number;
            };
        };
        Wallet: {
            accountId: string;
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            available: string;
            /**
             * @description Charges no grant could cover
             * @example 12.500000
             */
            debt: string;
            /** @description Grants with credits left, in burn order */
            grants: {
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                amount: string;
                /** Format: date-time */
                expiresAt: string | null;
                id: string;
                priority: number;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                remaining: string;
                /** @enum {string} */
                source: "plan_allowance" | "top_up" | "admin" | "promotion";
            }[];
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            held: string;
            /** @description Runtime launches in the plan's period (included null: unlimited) */
            runs: {
                /** @description The period's included credits and the grant that holds them */
                allowance: {
                    /** Format: date-time */
                    expiresAt: string | null;
                    granted: boolean;
                    grantId: string | null;
                    /**
                     * @description An amount of credits: a decimal string with 6 decimals
                     * @example 12.500000
                     */
                    included: string;
                    /**
                     * @description An amount of credits: a decimal string with 6 decimals
                     * @example 12.500000
                     */
                    remaining: string | null;
                };
                included: number | null;
                period: {
                    /** Format: date-time */
                    from: string;
                    /** Format: date-time */
                    to: string;
                };
                plan: string;
                /** Format: date-time */
                resetsAt: string | null;
                used: number;
            } | null;
            /** @description This period's spend as the spend limit counts it (settled charges and open holds) */
            spend: {
                /** Format: date-time */
                from: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                held: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                limit: string | null;
                period: string;
                /**
                 * @description An amount of credits: a decimal string with 6 decimals
                 * @example 12.500000
                 */
                spent: string;
                /** Format: date-time */
                to: string;
            };
            /**
             * @description An amount of credits: a decimal string with 6 decimals
             * @example 12.500000
             */
            total: string;
        };
        WebhookResult: {
            /** @description Already applied before (same event id): nothing done */
            duplicate: boolean;
            eventId: string;
            /** @description A type this service does not handle, or an object it cannot tie to an account */
            ignored: boolean;
            /** @enum {boolean} */
            received: true;
            type: string;
            /** @description Present when the event is acknowledged but waits for another (a refund or dispute of a top-up whose checkout has not come): why. It applies when that one comes. */
            waiting?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    live: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    ready: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not ready */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The exposition format */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    upsertAccount: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    id: string;
                    /** @enum {string} */
                    kind: "user" | "organization";
                    name?: string | null;
                    /** @description A plan id of the plans file (as shipped: free, team, enterprise) */
                    plan: string;
                };
            };
        };
        responses: {
            /** @description Updated */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            /** @description Created, with an empty wallet */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getLedger: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LedgerPage"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    listMembers: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The members */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Members"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    addMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The member and the seat count */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemberChange"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    removeMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The member and the seat count */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemberChange"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getSpendLimit: {
        parameters: {
            query?: {
                userId?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The limit */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendLimit"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    setSpendLimit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    credits: string | null;
                    /**
                     * @default month
                     * @enum {string}
                     */
                    period?: "month";
                    scope?: {
                        userId: string;
                    };
                    /**
                     * @default [
                     *       50,
                     *       80,
                     *       100
                     *     ]
                     */
                    thresholds?: number[];
                };
            };
        };
        responses: {
            /** @description The limit now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendLimit"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getStatement: {
        parameters: {
            query?: {
                format?: "json" | "csv";
            };
            header?: never;
            path: {
                id: string;
                /** @description A calendar month, YYYY-MM (UTC) */
                period: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The statement */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Statement"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    startTopUp: {
        parameters: {
            query?: never;
            header?: {
                /** @description The same key again returns the same Checkout Session; another pack under it is a 409 */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description A top-up pack id of the plans file */
                    pack: string;
                };
            };
        };
        responses: {
            /** @description Checkout started */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TopUpCheckout"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN, DL_BILLING_PLAN_FORBIDS */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN" | "DL_BILLING_PLAN_FORBIDS";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_IDEMPOTENCY_CONFLICT";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getUsage: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                groupBy?: "runtime" | "environment" | "day" | "user";
                to?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The usage */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Usage"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getWallet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The wallet */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Wallet"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    createGrant: {
        parameters: {
            query?: never;
            header?: {
                /** @description The same request again under this key returns the same result (200); a different one is a 409 */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    credits: string;
                    /** Format: date-time */
                    expiresAt?: string | null;
                    priority?: number;
                    reason: string;
                    /**
                     * @default admin
                     * @enum {string}
                     */
                    source?: "plan_allowance" | "top_up" | "admin" | "promotion";
                };
            };
        };
        responses: {
            /** @description The same request again: the same grant */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GrantResult"];
                };
            };
            /** @description Granted */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GrantResult"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_IDEMPOTENCY_CONFLICT";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getAccountPlan: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plan */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountPlan"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    setAccountPlan: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: date-time */
                    billingCycleAnchor?: string | null;
                    overrides?: {
                        [key: string]: unknown;
                    } | null;
                    /** @description A plan id of the plans file (as shipped: free, team, enterprise) */
                    plan: string;
                };
            };
        };
        responses: {
            /** @description The plan now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountPlan"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    createSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description It already had a live one */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Subscription"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    setSuspension: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description Which suspension: `admin` (default), or `non_payment` to waive one for non-payment (`suspended: false` only; the subscription's current past-due spell does not suspend the account again, a later one does)
                     * @enum {string}
                     */
                    cause?: "admin" | "non_payment";
                    reason?: string;
                    suspended: boolean;
                };
            };
        };
        responses: {
            /** @description The account status */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Suspension"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    scopes: (("control-plane" | "admin" | "reports") | string)[];
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedApiKey"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked (again: the first revocation) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevokedApiKey"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    runJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                job: "monthly-reset" | "cycle-allowances" | "expiry-sweep" | "grant-expiry" | "seat-reconciliation" | "stripe-recovery" | "ledger-reconcile" | "ancillary-accrual" | "event-partitions";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ran, or skipped because another instance holds its lock */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobResult"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    listSeatDiscrepancies: {
        parameters: {
            query?: {
                accountId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The latest 1000 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SeatDiscrepancies"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    runReconciliation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ran, or skipped because another instance holds its lock */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobResult"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    terminateRuntime: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                runtimeId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The command issued, or the open one */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RuntimeTerminate"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    listAudit: {
        parameters: {
            query?: {
                accountId?: string;
                cursor?: string;
                from?: string;
                limit?: number;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditPage"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    postEvents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventsRequest"];
            };
        };
        responses: {
            /** @description Applied */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventsResult"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    ancillaryReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AncillaryReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    creditsReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                groupBy?: "total" | "day" | "account";
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreditsReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    reconciliationReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReconciliationReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    seatsReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SeatsReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    spendLimitsReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendLimitsReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    topConsumersReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                limit?: number;
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TopConsumersReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    usageReport: {
        parameters: {
            query?: {
                format?: "json" | "csv";
                from?: string;
                groupBy?: "account" | "environment" | "day" | "user";
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UsageReport"];
                    "text/csv": string;
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    createReservation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    accountId: string;
                    agentId?: string;
                    /** @description The short form {name, sizeClass, accelerator?, hints?, base?, compatibility?}, an Environment document {apiVersion: environments.datalayer.io/v1alpha1, kind: Environment, metadata, spec}, or that document as YAML text */
                    environment: unknown;
                    /** @default 10 */
                    minutes?: number;
                    runtimeId: string;
                    userId?: string;
                    variant: string;
                };
            };
        };
        responses: {
            /** @description The same request again: the same reservation */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description Reserved */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_SPEND_LIMIT_REACHED, DL_BILLING_INSUFFICIENT_CREDITS */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_SPEND_LIMIT_REACHED" | "DL_BILLING_INSUFFICIENT_CREDITS";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN, DL_BILLING_ACCOUNT_SUSPENDED, DL_BILLING_PLAN_FORBIDS */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN" | "DL_BILLING_ACCOUNT_SUSPENDED" | "DL_BILLING_PLAN_FORBIDS";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_IDEMPOTENCY_CONFLICT";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_CAPABILITY_UNSUPPORTED */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_CAPABILITY_UNSUPPORTED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED, DL_BILLING_QUOTA_EXCEEDED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED" | "DL_BILLING_QUOTA_EXCEEDED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    getReservation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                runtimeId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The reservation, every charge explained */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReservationDetails"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    extendReservation: {
        parameters: {
            query?: never;
            header: {
                /** @description The same key again adds nothing and returns the reservation as it is now */
                "idempotency-key": string;
            };
            path: {
                runtimeId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    minutes: number;
                };
            };
        };
        responses: {
            /** @description Extended */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNAUTHENTICATED */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAUTHENTICATED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_SPEND_LIMIT_REACHED, DL_BILLING_INSUFFICIENT_CREDITS */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_SPEND_LIMIT_REACHED" | "DL_BILLING_INSUFFICIENT_CREDITS";
                        };
                    };
                };
            };
            /** @description DL_BILLING_FORBIDDEN, DL_BILLING_ACCOUNT_SUSPENDED */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_FORBIDDEN" | "DL_BILLING_ACCOUNT_SUSPENDED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description DL_BILLING_IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_IDEMPOTENCY_CONFLICT";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
    stripeWebhook: {
        parameters: {
            query?: never;
            header: {
                "stripe-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StripeEvent"];
            };
        };
        responses: {
            /** @description Received */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookResult"];
                };
            };
            /** @description DL_BILLING_REQUEST_INVALID, DL_BILLING_STRIPE_SIGNATURE_INVALID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_REQUEST_INVALID" | "DL_BILLING_STRIPE_SIGNATURE_INVALID";
                        };
                    };
                };
            };
            /** @description DL_BILLING_PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_PAYLOAD_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNSUPPORTED_MEDIA_TYPE";
                        };
                    };
                };
            };
            /** @description DL_BILLING_RATE_LIMITED */
            429: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_RATE_LIMITED";
                        };
                    };
                };
            };
            /** @description DL_BILLING_INTERNAL */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description DL_BILLING_UNAVAILABLE */
            503: {
                headers: {
                    /** @description Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"] & {
                        error?: {
                            /** @enum {string} */
                            code?: "DL_BILLING_UNAVAILABLE";
                        };
                    };
                };
            };
        };
    };
}
