// Owns: audit_log, audit_chains.
// Rows are appended through AuditService (record, recordMany, recordBulk).
import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditService } from './audit.service';

/** Global: every module records to the one audit log. */
@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditService],
  exports: [AuditService],
})
export class AuditModule {}
