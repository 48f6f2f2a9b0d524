// Owns: accounts, api_keys, api_key_accounts, auth_failures.
// Accounts and their plan terms and status (other modules change them through account-writes.ts), API keys, failed authentications.
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PlanCatalogModule } from 'src/plan-catalog/plan-catalog.module';
import { AccountHooks } from './account-hooks';
import { AccountsController } from './accounts.controller';
import { AccountsService } from './accounts.service';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeysService } from './auth/api-keys.service';
import { ApiKeyFailures } from './auth/failure-limiter';
import { FailureStore } from './auth/failure-store';

@Module({
  imports: [PlanCatalogModule],
  controllers: [ApiKeysController, AccountsController],
  providers: [ApiKeysService, AccountsService, AccountHooks, FailureStore, ApiKeyFailures, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeysService, AccountsService, AccountHooks, FailureStore, ApiKeyFailures],
})
export class AccountsModule {}
