import { Global, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { Metrics } from 'src/health/metrics';
import { DisabledBus } from './disabled-bus';
import { KafkajsBus } from './kafkajs-bus';
import { MessageBus } from './message-bus';

@Global()
@Module({
  providers: [
    {
      provide: MessageBus,
      inject: [APP_CONFIG, Metrics],
      useFactory: (config: AppConfig, metrics: Metrics): MessageBus => {
        if (!config.kafka) {
          // Left out on purpose (the CLI): nothing to warn about.
          if (!config.kafkaLeftOut) {
            new Logger('Kafka').warn('KAFKA_BROKERS is not set: lifecycle events are taken over HTTP only (POST /v1/events)');
          }
          return new DisabledBus();
        }
        return new KafkajsBus(
          { ...config.kafka, topics: config.topics },
          {
            killAfterBatch: config.faults.killAfterBatch,
            observeLag: (topic, partition, lag) => {
              const labels = { topic, partition: String(partition) };
              metrics.consumerLag.set(labels, lag);
              metrics.consumerLastBatch.set(labels, Date.now() / 1000);
            },
            observeBrokerLag: (lags) => {
              for (const l of lags) metrics.consumerLag.set({ topic: l.topic, partition: String(l.partition) }, l.lag);
            },
          },
        );
      },
    },
  ],
  exports: [MessageBus],
})
export class KafkaModule {}
