import type { MessageView } from './messages.js';

/**
 * Direct messages (SPEC §5.2) as the domain sees them: plain types shared by the repository, the
 * service and the pages. No Fastify, no Kysely.
 */

/** Discord's channel type for a direct message. */
export const CHANNEL_TYPE_DM = 1;

/** The other party of a conversation. */
export interface DmParty {
  id: string;
  username: string;
  name: string;
  avatarUrl: string | null;
  bot: boolean;
  /** Set for a bot account: its application. */
  applicationId: string | null;
}

/** One line of the Direct messages list. */
export interface DmConversationSummary {
  channelId: string;
  other: DmParty;
  /** The newest message, for the preview; null when nothing has been said yet. */
  last: { at: number; content: string; hasEmbeds: boolean } | null;
}

/** One conversation as /messages/:channelId shows it. */
export interface DmConversation {
  channelId: string;
  other: DmParty;
  /** Oldest first: the newest is at the bottom. */
  messages: MessageView[];
  /** Messages older than the first shown exist (the "Load older messages" link). */
  hasOlder: boolean;
  /** The page shown ends before this message (`?before=`); undefined for the newest page. */
  before?: string | undefined;
  /** Whether the other party, a bot, may still send messages here (the person may have removed its app). */
  botMayStillMessage: boolean;
}
