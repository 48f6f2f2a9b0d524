import type { AppConfig, KafkaConfig } from '../common/config/config';

/** The topics outbox messages go to; without Kafka, the contract's names (the rows wait in the outbox). */
export function topicsOf(config: Partial<Pick<AppConfig, 'kafka'>>): KafkaConfig['topics'] {
  return (
    config.kafka?.topics ?? {
      lifecycle: 'runtime.lifecycle.v1',
      lifecycleDlq: 'runtime.lifecycle.v1.dlq',
      membership: 'accounts.membership.v1',
      membershipDlq: 'accounts.membership.v1.dlq',
      commands: 'billing.commands.v1',
      notifications: 'billing.notifications.v1',
      ancillary: 'usage.ancillary.v1',
      ancillaryDlq: 'usage.ancillary.v1.dlq',
    }
  );
}
