import type { EventBus } from '../events/event-bus.js';
import { announceAccessChange, type ChannelEvents } from './channel-events.js';

/**
 * Live channel views hear messages and access changes through the domain events (issue #37 §2):
 * services emit `message.*` and `access.changed`, and this listener turns them into the few-byte
 * channel events that open streams follow (channel-events.ts), after the change committed.
 */
export function feedLiveViews(bus: EventBus, channels: Pick<ChannelEvents, 'publish'>): () => void {
  const offMessages = bus.on(['message.created', 'message.updated', 'message.deleted'], (event) => {
    const type = event.type === 'message.created' ? 'message_create' : event.type === 'message.updated' ? 'message_update' : 'message_delete';
    channels.publish({ type, channelId: event.channelId, messageId: event.messageId });
  });
  const offAccess = bus.on(['access.changed'], (event) => {
    announceAccessChange(channels, event.topicId);
  });
  // Issue #40 §2: on the recipient's topic, so no one else's view is even told it exists.
  const offEphemeral = bus.on(['message.ephemeral'], (event) => {
    channels.publish({ type: 'ephemeral_message', channelId: event.recipientId, messageId: event.messageId });
  });
  return () => {
    offMessages();
    offAccess();
    offEphemeral();
  };
}
