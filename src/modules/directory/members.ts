import type { Person } from './people.js';

/** A person's membership of a server with the ids of the roles they hold (besides @everyone). */
export interface Member {
  serverId: string;
  userId: string;
  nickname: string | null;
  joinedAt: number;
  roleIds: string[];
}

/** A member with the person's public profile, for member lists. */
export interface MemberWithPerson extends Member {
  person: Pick<Person, 'id' | 'username' | 'name' | 'avatarUrl' | 'bot'>;
}
