import { ApiError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { personActing } from '../../http/acting.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { cookieNames, cookieOptions } from '../../web/pages.js';
import { fieldMessages } from './accounts.page.js';
import { accountPage } from './account-deletion.page.js';
import { accountDeletionPreview, deleteAccount } from './account-deletion.service.js';
import { DeleteAccountBody } from './sessions.schemas.js';
import { PasskeyOptionsBody } from './passkeys.schemas.js';
import { beginSecondFactorPasskey } from './passkeys.service.js';

const hide = { hide: true } as const;

/** Settings → Account and its Delete account form (issue #38 §5). */
export function registerAccountDeletionPages(pages: App, services: Services): void {
  const names = cookieNames(services.config.secureCookies);
  signedInPages(pages, (signedIn) => {
    signedIn.get('/settings/account', { schema: hide }, async (request, reply) => {
      const preview = await accountDeletionPreview(services, request.signedInViewer.id);
      return sendHtml(reply, accountPage({ ctx: signedInContext(request, services), preview, errors: {} }));
    });

    // The passkey confirming the deletion (issue #38 §5): this person's passkeys, a challenge for re-authentication only.
    signedIn.post('/settings/account/delete/passkey/options', { schema: { ...hide, body: PasskeyOptionsBody } }, async (request, reply) => {
      const options = await beginSecondFactorPasskey(services, request.signedInViewer.id, 'reauthenticate');
      return reply.header('Cache-Control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(options));
    });

    signedIn.post('/settings/account/delete', { schema: { ...hide, body: DeleteAccountBody } }, async (request, reply) => {
      try {
        await deleteAccount(services, personActing(request, services.clock), { password: request.body.password ?? '', code: request.body.code, passkey: request.body.credential || undefined });
        reply.clearCookie(names.session, cookieOptions(services));
        return reply.redirect('/?account=deleted', 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 50035) throw error;
        const preview = await accountDeletionPreview(services, request.signedInViewer.id);
        return sendHtml(reply, accountPage({ ctx: signedInContext(request, services), preview, errors: fieldMessages(error.errors) }), 400);
      }
    });
  });
}
