import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import type { Person } from '../directory/people.js';
import { getPersonById, saveProfile } from '../directory/people.service.js';
import { releaseUploadedImage, storeUploadedImage } from '../resources/uploaded-images.service.js';
import { parseStoredImage } from '../resources/uploaded-images.js';

/**
 * Uploads (image data: Discord's `data:image/png;base64,…`, or a page's file bytes) or removes
 * (null) the actor's own avatar (issue #42 §3): a person from Settings → Profile, a bot with
 * Discord's PATCH /users/@me. 400 50035 at `field` with nothing stored. The avatar it replaces
 * is deleted from the blob store once the account no longer names it. Emits profile.updated.
 */
export async function setOwnAvatar(deps: Deps, acting: Acting<Actor>, data: unknown, field = 'avatar'): Promise<Person> {
  const actor = acting.actor;
  if (actor.kind !== 'person' && actor.kind !== 'bot') throw ApiErrors.missingAccess();
  const account = await getPersonById(deps, actor.id);
  if (!account) throw ApiErrors.unknownUser();
  const avatarUrl = data === null ? null : await storeUploadedImage(deps, field, 'avatars', account.id, data);
  try {
    await changing(deps, acting, async (trx, emit) => {
      await saveProfile(trx, account.id, { avatarUrl });
      if (avatarUrl !== account.avatarUrl) emit({ type: 'profile.updated', userId: account.id, changes: [{ key: 'avatar_url', old: account.avatarUrl, new: avatarUrl }] });
    });
  } catch (error) {
    await releaseUploadedImage(deps, avatarUrl, account.avatarUrl);
    throw error;
  }
  // A bot's avatar may be its app's icon (`/app-icons/…`, the app's blob, which the app still
  // names): only the account's own upload is released.
  const previous = parseStoredImage(account.avatarUrl);
  if (previous?.kind === 'avatars' && previous.id === account.id) await releaseUploadedImage(deps, account.avatarUrl, avatarUrl);
  return { ...account, avatarUrl };
}
