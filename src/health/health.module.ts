import { Global, Module } from '@nestjs/common';
import { DatabaseMetrics } from './database-metrics';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';
import { MetricsListener } from './metrics-listener';

@Global()
@Module({
  controllers: [HealthController],
  providers: [Metrics, DatabaseMetrics, MetricsListener],
  exports: [Metrics, MetricsListener],
})
export class HealthModule {}
