import type { Person } from './people.js';

/**
 * How a membership came about (issue #21 §3). A person's own act: 'created' (they made the
 * server), 'invite_link' (they opened an invite link and joined), 'invitation' (they accepted an
 * invitation). Not theirs: 'operator' (`gatehouse members add`, an operator's trusted action),
 * 'bot_install' (a bot account joining with its app's install), 'added' (memberships older than
 * the invitation flow, whose origin is unknown).
 */
export type JoinedVia = 'created' | 'invite_link' | 'invitation' | 'operator' | 'bot_install' | 'added';

/** The memberships a person made by their own act: only these count as consent to bot DMs (docs/user-installs.md). */
export const JOINED_BY_OWN_ACT: readonly JoinedVia[] = ['created', 'invite_link', 'invitation'];

/** A person's membership of a server with the ids of the roles they hold (besides @everyone). */
export interface Member {
  serverId: string;
  userId: string;
  nickname: string | null;
  joinedAt: number;
  joinedVia: JoinedVia;
  roleIds: string[];
}

/** A pending invitation to join a server, as the invited person's home page lists it. */
export interface MemberInvitation {
  id: string;
  serverId: string;
  serverName: string;
  userId: string;
  inviterId: string;
  inviterName: string;
  roleIds: string[];
  createdAt: number;
  /** Issue #36 §3: it cannot be accepted from this time on. */
  expiresAt: number;
}

/** A member with the person's public profile, for member lists. */
export interface MemberWithPerson extends Member {
  person: Pick<Person, 'id' | 'username' | 'name' | 'avatarUrl' | 'bot'>;
}
