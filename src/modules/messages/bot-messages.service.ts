import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { requireBotChannelPermission, type BotPrincipal } from '../applications/bots.service.js';
import { getPersonById } from '../directory/people.service.js';
import { discardFiles, presentFiles, receiveUpload, settleMessageFiles, type Upload } from '../files/files.service.js';
import { requireBotMayPostInDm } from './dms.service.js';
import { parseMessagePayload } from './message-payload.js';
import { insertMessage } from './messages.repository.js';
import { presentMessage, type MessageResource } from '../resources/resources.js';

/**
 * A bot's message as the API returns it: Discord's message object (resources.ts). Bots mention
 * nobody: `mentions` is always empty and `mention_everyone` false, and "@everyone" stays literal
 * text (docs/user-installs.md).
 */
export type BotMessageRecord = MessageResource;

/**
 * POST /api/v1/channels/{channelId}/messages with bot credentials (issue #4 "Bot credentials").
 * In a server: the bot's own permissions there — View channel and Send messages, plus Embed links
 * when embeds are sent (403 50013 otherwise); a channel of a server it is not in → 404 10003.
 * In a DM: the bot must be one of its two users (else 10003) and may still message the person
 * (user install or a shared server, else 403 50007). The payload follows webhook execute's rules
 * (message-payload.ts) without the username/avatar override. Live views hear `message.created`
 * once it is stored. `acting` is the bot's (the route's authentication found `bot`).
 */
export async function postBotMessage(deps: Deps, acting: Acting<Actor>, bot: BotPrincipal, channelId: string, body: unknown, upload?: Upload): Promise<BotMessageRecord> {
  const access = await requireBotChannelPermission(deps, bot, channelId, Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES);
  // Discord: files need Attach files; checked before a byte of them is stored.
  if (upload !== undefined && (access.permissions & Permission.ATTACH_FILES) === 0n) throw ApiErrors.missingPermissions();
  if (upload !== undefined && access.serverId === null) await requireBotMayPostInDm(deps, bot, access.channel.id);
  const id = deps.ids.next();
  // Issue #42 §2: files first (streamed to the store), removed again if the message is not stored.
  const received = upload === undefined ? undefined : await receiveUpload(deps, upload, { messageId: id, channelId: access.channel.id });
  try {
    const files = received === undefined ? undefined : await settleMessageFiles(deps, received.body, received.files);
    const payload = received === undefined ? body : received.body;
    const parsed = parseMessagePayload(payload, files === undefined ? { identityOverride: false, serviceName: deps.config.serviceName } : { identityOverride: false, serviceName: deps.config.serviceName, attachmentNames: files.names });
    if (!parsed.ok) throw parsed.error;
    const content = parsed.value.content ?? '';
    const embeds = parsed.value.embeds ?? [];
    // Discord drops embeds silently without Embed links; we refuse, so the bot learns why they are missing.
    if (embeds.length > 0 && (access.permissions & Permission.EMBED_LINKS) === 0n) throw ApiErrors.missingPermissions();
    if (upload === undefined && access.serverId === null) await requireBotMayPostInDm(deps, bot, access.channel.id);

    const account = await getPersonById(deps, bot.botUserId);
    if (!account) throw ApiErrors.unauthorized();
    const createdAt = deps.clock.now();
    await insertMessage(deps.db, {
      id,
      channelId: access.channel.id,
      authorId: bot.botUserId,
      webhookId: null,
      applicationId: bot.application.id,
      authorName: null,
      authorAvatarUrl: null,
      content,
      embeds,
      createdAt,
    });
    await emitted(deps, acting, { type: 'message.created', serverId: access.serverId, channelId: access.channel.id, messageId: id });
    return presentMessage({
      id,
      channelId: access.channel.id,
      content,
      embeds,
      author: account,
      webhookId: null,
      applicationId: bot.application.id,
      createdAt,
      editedAt: null,
      ...(files ? { attachments: presentFiles(deps, files.all) } : {}),
    });
  } catch (error) {
    if (received) await discardFiles(deps, [...received.files.values()]);
    throw error;
  }
}
