import { MigrationInterface, QueryRunner } from 'typeorm';

export class Ledger1796204668759 implements MigrationInterface {
  name = 'Ledger1796204668759';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "audit_chains" (
                "chain" text NOT NULL,
                "seq" bigint NOT NULL,
                "prev_hash" text NOT NULL,
                "hash" text NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_1211fa8935eef9b61dbe73832a7" PRIMARY KEY ("chain")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "audit_log" (
                "id" BIGSERIAL NOT NULL,
                "chain" text NOT NULL,
                "seq" bigint NOT NULL,
                "at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "actor" text NOT NULL,
                "action" text NOT NULL,
                "account_id" text,
                "before" jsonb,
                "after" jsonb,
                "correlation_id" text,
                "prev_hash" text NOT NULL,
                "hash" text NOT NULL,
                CONSTRAINT "PK_07fefa57f7f5ab8fc3f52b3ed0b" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "audit_log_account_idx" ON "audit_log" ("account_id", "id")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "audit_log_chain_seq_key" ON "audit_log" ("chain", "seq")
        `);
    await queryRunner.query(`
            CREATE TABLE "grants" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "source" text NOT NULL,
                "amount" bigint NOT NULL,
                "remaining" bigint NOT NULL,
                "priority" integer NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "status" text NOT NULL DEFAULT 'active',
                "reason" text NOT NULL,
                "reference" text,
                "version" bigint NOT NULL DEFAULT '0',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "grants_remaining_check" CHECK (
                    "remaining" >= 0
                    AND "remaining" <= "amount"
                ),
                CONSTRAINT "grants_amount_check" CHECK ("amount" > 0),
                CONSTRAINT "grants_status_check" CHECK ("status" IN ('active', 'expired')),
                CONSTRAINT "grants_source_check" CHECK (
                    "source" IN ('plan_allowance', 'top_up', 'admin', 'promotion')
                ),
                CONSTRAINT "PK_a25f5f89eff8b3277f7969b7094" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "grants_expiry_idx" ON "grants" ("expires_at")
            WHERE "status" = 'active'
                AND "expires_at" IS NOT NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "grants_account_idx" ON "grants" ("account_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "hold_allocations" (
                "hold_id" text NOT NULL,
                "grant_id" text NOT NULL,
                "held" bigint NOT NULL DEFAULT '0',
                "charged" bigint NOT NULL DEFAULT '0',
                "released" bigint NOT NULL DEFAULT '0',
                CONSTRAINT "hold_allocations_amounts_check" CHECK (
                    "held" >= 0
                    AND "charged" >= 0
                    AND "released" >= 0
                    AND "released" <= "held"
                ),
                CONSTRAINT "PK_5dd1395f6f3eec7bbbd87d9a9c3" PRIMARY KEY ("hold_id", "grant_id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "holds" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "status" text NOT NULL DEFAULT 'reserved',
                "amount" bigint NOT NULL,
                "settled_amount" bigint NOT NULL DEFAULT '0',
                "released_amount" bigint NOT NULL DEFAULT '0',
                "charged_amount" bigint NOT NULL DEFAULT '0',
                "debt_amount" bigint NOT NULL DEFAULT '0',
                "reference" text,
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "version" bigint NOT NULL DEFAULT '0',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "resolved_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "holds_resolved_check" CHECK (
                    ("status" = 'reserved') = ("resolved_at" IS NULL)
                    AND (
                        "status" = 'reserved'
                        OR "settled_amount" + "released_amount" = "amount"
                    )
                ),
                CONSTRAINT "holds_charged_check" CHECK (
                    "charged_amount" >= 0
                    AND "charged_amount" <= "amount"
                    AND "debt_amount" >= 0
                    AND "debt_amount" <= "charged_amount"
                ),
                CONSTRAINT "holds_amounts_check" CHECK (
                    "settled_amount" >= 0
                    AND "released_amount" >= 0
                    AND "settled_amount" <= "amount"
                    AND "settled_amount" + "released_amount" <= "amount"
                ),
                CONSTRAINT "holds_amount_check" CHECK ("amount" > 0),
                CONSTRAINT "holds_status_check" CHECK (
                    "status" IN ('reserved', 'settled', 'voided', 'expired')
                ),
                CONSTRAINT "PK_a8a21700a256e0267fb43f4f7ae" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "holds_debt_idx" ON "holds" ("account_id")
            WHERE "debt_amount" > 0
        `);
    await queryRunner.query(`
            CREATE INDEX "holds_expiry_idx" ON "holds" ("expires_at")
            WHERE "status" = 'reserved'
                AND "expires_at" IS NOT NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "holds_account_idx" ON "holds" ("account_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "ledger_entries" (
                "transaction_id" bigint NOT NULL,
                "line" smallint NOT NULL,
                "ledger_account" text NOT NULL,
                "amount" bigint NOT NULL,
                CONSTRAINT "ledger_entries_amount_check" CHECK ("amount" <> 0),
                CONSTRAINT "PK_ebcb7d8c44df1c39c72efd4e732" PRIMARY KEY ("transaction_id", "line")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "ledger_transactions" (
                "id" BIGSERIAL NOT NULL,
                "account_id" text NOT NULL,
                "kind" text NOT NULL,
                "idempotency_key" text NOT NULL,
                "fingerprint" text NOT NULL,
                "amount" bigint NOT NULL,
                "hold_id" text,
                "grant_id" text,
                "reference" text,
                "total_after" bigint NOT NULL,
                "held_after" bigint NOT NULL,
                "available_after" bigint NOT NULL,
                "explanation" jsonb NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "ledger_transactions_kind_check" CHECK (
                    "kind" IN (
                        'reservation',
                        'settlement',
                        'release',
                        'void',
                        'grant',
                        'top-up',
                        'expiry',
                        'adjustment'
                    )
                ),
                CONSTRAINT "PK_633d103c9e415d615aacf9b1929" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_transactions_account_idx" ON "ledger_transactions" ("account_id", "id")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "ledger_transactions_idempotency_key" ON "ledger_transactions" ("account_id", "idempotency_key")
        `);
    await queryRunner.query(`
            CREATE TABLE "wallets" (
                "account_id" text NOT NULL,
                "grants_balance" bigint NOT NULL DEFAULT '0',
                "holds_balance" bigint NOT NULL DEFAULT '0',
                "issued" bigint NOT NULL DEFAULT '0',
                "consumed" bigint NOT NULL DEFAULT '0',
                "expired" bigint NOT NULL DEFAULT '0',
                "debt" bigint NOT NULL DEFAULT '0',
                "version" bigint NOT NULL DEFAULT '0',
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "wallets_balanced_check" CHECK (
                    "grants_balance" + "holds_balance" + "issued" + "consumed" + "expired" + "debt" = 0
                ),
                CONSTRAINT "wallets_debt_check" CHECK ("debt" <= 0),
                CONSTRAINT "wallets_expired_check" CHECK ("expired" >= 0),
                CONSTRAINT "wallets_issued_check" CHECK ("issued" <= 0),
                CONSTRAINT "wallets_holds_balance_check" CHECK ("holds_balance" >= 0),
                CONSTRAINT "wallets_grants_balance_check" CHECK ("grants_balance" >= 0),
                CONSTRAINT "PK_3758a15697c5d6964552b6a9d1c" PRIMARY KEY ("account_id")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets"
            ADD CONSTRAINT "wallets_account_fk" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "wallets" DROP CONSTRAINT "wallets_account_fk"
        `);
    await queryRunner.query(`
            DROP TABLE "wallets"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_transactions_idempotency_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_transactions_account_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "ledger_transactions"
        `);
    await queryRunner.query(`
            DROP TABLE "ledger_entries"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."holds_account_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."holds_expiry_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."holds_debt_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "holds"
        `);
    await queryRunner.query(`
            DROP TABLE "hold_allocations"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."grants_account_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."grants_expiry_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "grants"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."audit_log_chain_seq_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."audit_log_account_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "audit_log"
        `);
    await queryRunner.query(`
            DROP TABLE "audit_chains"
        `);
  }
}
