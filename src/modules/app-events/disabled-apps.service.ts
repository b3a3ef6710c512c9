import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { deleteQueuedAppEventsOf, insertDelivery } from './app-events.repository.js';

/** What the app's delivery log says of an event dropped because the operator disabled the app. */
export const DROPPED_DISABLED = 'the operator of this service disabled this app, so its events are not sent';

/**
 * Issue #39: an app the operator disables gets no app events while it is disabled, neither the ones
 * queued for it (dropped here, in the disabling's own commit, each recorded in its delivery log)
 * nor later ones (the recorder skips it: findEnabledEventEndpoints). They are not held for when it
 * is enabled: it could not have acted on them, and its grants were revoked with the disabling.
 */
export async function dropAppEventsOfDisabledApp(deps: Pick<Deps, 'ids'>, trx: Transaction<Database>, applicationId: string, now: number): Promise<number> {
  const dropped = await deleteQueuedAppEventsOf(trx, applicationId);
  for (const eventType of dropped) {
    await insertDelivery(trx, { id: deps.ids.next(), applicationId, kind: 'event', eventType, outcome: 'dropped', httpStatus: null, latencyMs: null, nextRetryAt: null, error: DROPPED_DISABLED, createdAt: now });
  }
  return dropped.length;
}
