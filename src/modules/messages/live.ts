import type { MessageView } from './messages.js';

/** What a live stream sends for one channel event: a message to show (created or edited), or an id to remove. */
export type LiveUpdate = { kind: 'message'; created: boolean; message: MessageView } | { kind: 'delete'; messageId: string };
