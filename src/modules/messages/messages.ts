import type { Embed } from './embed.js';
import type { FileView } from '../files/attachments.js';

/**
 * A message as pages (and later the API) show it. One shape for people's, bots' and webhooks'
 * messages: `author.app` is what the APP badge shows (a webhook or a bot account).
 */
export interface MessageView {
  id: string;
  channelId: string;
  author: { id: string; name: string; avatarUrl: string | null; bot: boolean; app: boolean };
  content: string;
  embeds: unknown[];
  /** Issue #42 §3: its files, with signed URLs (files.service.ts fileViews); empty until the service adds them. */
  attachments: FileView[];
  createdAt: number;
  editedAt: number | null;
  /**
   * Issue #40 §2: an app's answer to a command shows who used which command; `loading` is a
   * deferred answer's placeholder ("<App> is thinking…"). Absent on other messages.
   */
  interaction?: { userName: string; commandName: string; loading: boolean };
  /**
   * Issue #40 §2: an app's ephemeral message (Discord's flag 64), on the page of the person who
   * used the command alone: marked "Only you can see this", with nothing to edit or delete.
   */
  ephemeral?: true;
}

/** A message row with what is known about its author, before it becomes a view. */
export interface StoredMessage {
  id: string;
  channelId: string;
  authorId: string;
  webhookId: string | null;
  /** Per-message display name and avatar (webhooks set these; SPEC §2.9). */
  authorName: string | null;
  authorAvatarUrl: string | null;
  content: string;
  embeds: string;
  createdAt: number;
  editedAt: number | null;
  /** The author's account, when the author is a person or a bot (not a webhook). */
  user: { name: string; avatarUrl: string | null; bot: boolean } | null;
}

/** Discord's limit for message content, in Unicode code points. */
export const MESSAGE_MAX_LENGTH = 2000;
/** How many messages the channel view shows. */
export const CHANNEL_VIEW_LIMIT = 50;

function parseEmbeds(text: string): unknown[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

export function toMessageView(m: StoredMessage): MessageView {
  const bot = m.user?.bot ?? false;
  return {
    id: m.id,
    channelId: m.channelId,
    author: {
      id: m.authorId,
      name: m.authorName ?? m.user?.name ?? 'Deleted user',
      avatarUrl: m.authorAvatarUrl ?? m.user?.avatarUrl ?? null,
      bot: bot || m.webhookId !== null,
      app: bot || m.webhookId !== null,
    },
    content: m.content,
    embeds: parseEmbeds(m.embeds),
    attachments: [],
    createdAt: m.createdAt,
    editedAt: m.editedAt,
  };
}

/** An app's message answering a command, as the channel view shows it: who used which command, and whether only they see it. */
export function interactionMessageView(stored: { message: StoredMessage; interaction: { userName: string; commandName: string; loading: boolean }; ephemeral: boolean }): MessageView {
  const { userName, commandName, loading } = stored.interaction;
  return { ...toMessageView(stored.message), interaction: { userName, commandName, loading }, ...(stored.ephemeral ? { ephemeral: true as const } : {}) };
}

/**
 * Plain-text content as typed: trimmed, then 1–2000 code points (so an emoji counts once).
 * Returns the trimmed text or what is wrong with it.
 */
export function checkContent(raw: string): { ok: true; content: string } | { ok: false; code: 'empty' | 'too-long' } {
  const content = raw.trim();
  if (content.length === 0) return { ok: false, code: 'empty' };
  let count = 0;
  for (const _ of content) {
    count += 1;
    if (count > MESSAGE_MAX_LENGTH) return { ok: false, code: 'too-long' };
  }
  return { ok: true, content };
}

/** A stored webhook message (messages.repository.ts), embeds still as stored JSON or parsed. */
export interface WebhookMessage {
  id: string;
  channelId: string;
  webhookId: string;
  applicationId: string | null;
  /** The name and avatar shown for this message (the webhook's at the time, or the override). */
  authorName: string;
  authorAvatarUrl: string | null;
  content: string;
  embeds: Embed[] | string;
  createdAt: number;
  editedAt: number | null;
}
