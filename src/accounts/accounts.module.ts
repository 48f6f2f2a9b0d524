import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeysService } from './auth/api-keys.service';

@Module({
  controllers: [ApiKeysController],
  providers: [ApiKeysService, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeysService],
})
export class AccountsModule {}
