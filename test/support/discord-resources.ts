import { createHash } from 'node:crypto';

/**
 * Expected JSON of Discord-shaped resources (DESIGN §1), written out independently of
 * src/modules/resources so that a presenter that drifts fails the tests.
 */

/** The avatar/icon hash of a stored URL: the first 32 hex digits of its SHA-256 (DESIGN §1). */
export function hashOf(url: string | null): string | null {
  return url === null ? null : createHash('sha256').update(url).digest('hex').slice(0, 32);
}

/** Discord's user object as Gatehouse sends it. */
export function userJson(u: { id: string; username: unknown; global_name: unknown; avatar_url: string | null; bot?: boolean }): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    global_name: u.global_name,
    avatar: hashOf(u.avatar_url),
    discriminator: '0',
    public_flags: 0,
    flags: 0,
    bot: u.bot ?? false,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    avatar_url: u.avatar_url,
  };
}

/** Discord's application object as Gatehouse sends it. */
/** `verify_key`: the app's hex Ed25519 public key (issue #40 §1), or a matcher for one. */
export function applicationJson(a: { id: string; name: string; icon_url: string | null; description: string; bot_public: boolean; bot_require_code_grant: boolean; verify_key: unknown }): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    icon: hashOf(a.icon_url),
    description: a.description,
    summary: '',
    type: null,
    bot_public: a.bot_public,
    bot_require_code_grant: a.bot_require_code_grant,
    verify_key: a.verify_key,
    flags: 0,
    hook: true,
    icon_url: a.icon_url,
  };
}

/** The fields every message carries with Discord's neutral values (SPEC §2.10: no mentions). */
export const MESSAGE_NEUTRAL = {
  type: 0,
  attachments: [],
  mentions: [],
  mention_roles: [],
  mention_everyone: false,
  pinned: false,
  tts: false,
  flags: 0,
  components: [],
} as const;
