import { Permission, has } from '../../core/permissions.js';
import type { FormError, FormValues, PageCtx } from '../../web/components.js';
import type { Channel } from './channels.js';
import type { ServerInvitation } from './invitations.js';
import type { ListedInvite } from './invites.js';
import type { MemberWithPerson } from './members.js';
import { ServerAction, type Need } from './policy.js';
import type { Role } from './roles.js';

/** What the server settings pages show, section by section (server-settings.page.ts). */
export type SettingsSection = 'overview' | 'channels' | 'roles' | 'role' | 'members' | 'invites';

/** What the viewer may do here; the page shows no control for anything else. */
export interface SettingsAbilities {
  manageServer: boolean;
  manageChannels: boolean;
  manageRoles: boolean;
  createInvite: boolean;
  removeMembers: boolean;
  /** Manage webhooks or Manage server: the Integrations section (webhooks, installed apps). */
  integrations: boolean;
  /** View audit log: the Audit log section (modules/audit/). */
  viewAuditLog: boolean;
}

/** Who may open which settings section (docs/permissions.md). */
export const SECTION_NEEDS: Record<SettingsSection, Need> = {
  overview: ServerAction.openSettings,
  channels: ServerAction.manageChannels,
  roles: ServerAction.manageRoles,
  role: ServerAction.manageRoles,
  members: ServerAction.seeMembers,
  invites: ServerAction.createInvite,
};

/** A section named in a URL (the overview and each role have their own addresses). */
export function isSection(value: string): value is Exclude<SettingsSection, 'role' | 'overview'> {
  return value === 'channels' || value === 'roles' || value === 'members' || value === 'invites';
}

export function settingsAbilities(permissions: bigint): SettingsAbilities {
  return {
    manageServer: has(permissions, Permission.MANAGE_SERVER),
    manageChannels: has(permissions, Permission.MANAGE_CHANNELS),
    manageRoles: has(permissions, Permission.MANAGE_ROLES),
    createInvite: has(permissions, Permission.CREATE_INSTANT_INVITE) || has(permissions, Permission.MANAGE_SERVER),
    removeMembers: has(permissions, Permission.KICK_MEMBERS) || has(permissions, Permission.MANAGE_SERVER),
    integrations: has(permissions, Permission.MANAGE_WEBHOOKS) || has(permissions, Permission.MANAGE_SERVER),
    viewAuditLog: has(permissions, Permission.VIEW_AUDIT_LOG),
  };
}

export interface InviteRow extends ListedInvite {
  creatorName: string;
  /** The link to copy again (issue #24); null when its code cannot be shown. */
  url: string | null;
}

export interface SettingsPageInput {
  ctx: PageCtx;
  section: SettingsSection;
  server: { id: string; name: string; ownerId: string; iconUrl: string | null; mfaLevel?: 0 | 1 };
  /** The viewer's permissions here, to disable what they cannot grant. */
  permissions: bigint;
  can: SettingsAbilities;
  channels: Channel[];
  roles: Role[];
  members: MemberWithPerson[];
  invites: InviteRow[];
  /** Pending invitations by username with their senders (issue #36 §3); empty for viewers without Manage server. */
  invitations?: ServerInvitation[];
  /** How many invitations await an answer (a number only: who was invited is not shown). */
  pendingInvitations?: number;
  now: number;
  /** The role being edited (section 'role'). */
  role?: Role;
  /** A just-created invite link: shown this once. */
  createdInviteUrl?: string;
  notice?: string;
  error?: FormError;
  values?: FormValues;
}
