import { Account } from '../../accounts/entities/account.entity';
import { ApiKey } from '../../accounts/entities/api-key.entity';
import { InboxMessage } from '../../messaging/entities/inbox-message.entity';
import { OutboxMessage } from '../../messaging/entities/outbox-message.entity';
import { RuntimeEvent } from '../../metering/entities/runtime-event.entity';
import { ReservationExtension } from '../../metering/entities/reservation-extension.entity';
import { RuntimeCommand } from '../../metering/entities/runtime-command.entity';
import { Runtime } from '../../metering/entities/runtime.entity';
import { NotificationSent } from '../../plans/entities/notification-sent.entity';
import { PlanAllowance } from '../../plans/entities/plan-allowance.entity';

/** Every entity of the service: the one list the data source and the migration check use. */
export const ENTITIES = [Account, ApiKey, OutboxMessage, InboxMessage, RuntimeEvent, Runtime, RuntimeCommand, ReservationExtension,
  PlanAllowance, NotificationSent];
