import { Module, type DynamicModule } from '@nestjs/common';
import { CliModule } from '../cli.module';
import { ReportsModule } from './reports.module';

/** The CLI's context for `reports …`: the CLI's own (config, database, audit, ledger, keys) plus the reports. */
@Module({})
export class ReportsCliModule {
  static forRoot(): DynamicModule {
    return { module: ReportsCliModule, imports: [CliModule.forRoot(), ReportsModule] };
  }
}
