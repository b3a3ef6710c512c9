import { presentUser, type MessageResource, type UserResource } from '../resources/resources.js';
import { LOADING } from '../interactions/interactions.js';
import type { MessageInteraction } from './message-interactions.repository.js';

/**
 * Issue #40 §2 and §4: how a message that answers a command reads over the API, wherever a bot or
 * an app reads it (its follow-up routes, GET /channels/{id}/messages and /messages/{id}, the
 * bot's edit): Discord's message type 20 (CHAT_INPUT_COMMAND), `webhook_id` the application,
 * flag LOADING while a deferred answer waits, and who used which command as
 * `interaction_metadata` and the older `interaction`. Pure: no Fastify, no Kysely.
 * Message type 20 is Discord's CHAT_INPUT_COMMAND: an app's answer to a slash command.
 */

/** Discord's application command type 1, CHAT_INPUT: the only kind invoked here. */
const COMMAND_TYPE_CHAT_INPUT = 1;

/** A message that answers a command, as Discord's message object shows it. */
export type InteractionMessageResource = Omit<MessageResource, 'type' | 'flags'> & {
  type: 20;
  flags: number;
  interaction_metadata: { id: string; type: number; name: string; command_type: number; user: UserResource; authorizing_integration_owners: Record<string, string> };
  interaction: { id: string; type: number; name: string; user: UserResource };
};

/** The invoker as Discord's user object, from what the message's interaction row holds. */
export function invokerOf(of: MessageInteraction): UserResource {
  return presentUser({ id: of.userId, username: of.username, name: of.userName, avatarUrl: of.userAvatarUrl, bot: false });
}

/** `message` with the fields of the command it answers; `user` is the invoker (invokerOf unless the caller has it). */
export function withInteraction(message: MessageResource, of: MessageInteraction, applicationId: string, user: UserResource = invokerOf(of)): InteractionMessageResource {
  return {
    ...message,
    type: 20,
    webhook_id: applicationId,
    application_id: applicationId,
    flags: of.loading ? LOADING : 0,
    interaction_metadata: { id: of.interactionId, type: of.type, name: of.commandName, command_type: COMMAND_TYPE_CHAT_INPUT, user, authorizing_integration_owners: {} },
    interaction: { id: of.interactionId, type: of.type, name: of.commandName, user },
  };
}

/** Each message of a page with its command's fields when it answers one (`interactions`: listMessageInteractions of the page). */
export function withInteractions(messages: readonly MessageResource[], interactions: ReadonlyMap<string, MessageInteraction>): Array<MessageResource | InteractionMessageResource> {
  return messages.map((message) => {
    const of = interactions.get(message.id);
    return of === undefined || message.application_id === undefined ? message : withInteraction(message, of, message.application_id);
  });
}
