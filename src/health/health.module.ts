import { Global, Module } from '@nestjs/common';
import { DatabaseMetrics } from './database-metrics';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';

@Global()
@Module({
  controllers: [HealthController],
  providers: [Metrics, DatabaseMetrics],
  exports: [Metrics],
})
export class HealthModule {}
