import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { LifecycleConsumer } from './lifecycle-consumer';
import { LifecycleIngestService } from './lifecycle-ingest.service';

@Module({
  controllers: [EventsController],
  providers: [LifecycleIngestService, LifecycleConsumer],
  exports: [LifecycleIngestService],
})
export class MeteringModule {}
