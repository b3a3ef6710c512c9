import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Acting } from '../../core/acting.js';
import { AUDIT_REASON_MAX_LENGTH } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import { ApiError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { actorOf, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { formErrorMessage, type SignedInCtx } from '../../web/components.js';
import { accountDeletionPreview } from '../accounts/account-deletion.service.js';
import { endSessionsByOperator } from '../accounts/operator-sessions.service.js';
import { disableEffects, disablePerson, enablePerson, findPersonForOperator, listPeopleForOperator, personSummary, requireAdmin } from '../accounts/people-admin.service.js';
import { operatorResetLink } from '../accounts/password-reset.service.js';
import { deleteAppAsOperator, disableApp, enableApp, listApps, showApp, APPS_PAGE_MAX } from '../applications/apps-admin.service.js';
import { transferServer } from '../directory/server-transfer.service.js';
import { listServers, showServer, SERVERS_PAGE_MAX } from '../directory/servers-admin.service.js';
import { deleteServer } from '../directory/servers.service.js';
import { resetSecondFactors } from '../mfa/mfa.service.js';
import {
  adminConfirmPage,
  adminNotFoundPage,
  appEffects,
  appPage,
  appsPage,
  gatePage,
  overviewPage,
  peoplePage,
  personPage,
  resetLinkPage,
  serverEffects,
  serverPage,
  serversPage,
  type AdminConfirmation,
  type AdminSection,
} from './admin.page.js';
import { adminOverview, deletePersonTransferring } from './admin.service.js';
import { CsrfBody, DeletePersonBody, DoneQuery, IdParams, ListQuery, PeopleQuery, ReasonBody, TransferBody } from './admin.schemas.js';

const hide = { hide: true } as const;

/** The notices after an action (post/redirect/get), by `?done=`. */
const DONE: Record<string, string> = {
  disabled: 'Disabled.',
  enabled: 'Enabled.',
  'sessions-ended': 'Every session ended.',
  'second-factor-reset': 'Their second factor was removed; they sign in with their password alone until they set one up.',
  transferred: 'Ownership transferred.',
};

/** What a missing person, app or server is called on its 404 page. */
const NOT_FOUND: Record<number, { section: AdminSection; title: string; detail: string }> = {
  10013: { section: 'people', title: 'Person not found', detail: 'Nobody has this id on this instance (or the account was deleted).' },
  10002: { section: 'apps', title: 'App not found', detail: 'No app has this id on this instance.' },
  10004: { section: 'servers', title: 'Server not found', detail: 'No server has this id on this instance.' },
};

/**
 * The admin pages under /admin (issue #39; docs/operations.md "The admin pages"). Only a signed-in
 * administrator with a second factor who signed in with it recently gets past the gate
 * (people-admin.service.ts requireAdmin); everyone else is told why on a 403 page, with the way
 * forward: Settings → Security, or signing in again. The gate runs before every route here, the
 * forms' POSTs included, so an action is refused once the sign-in is too old.
 */
export function registerAdminPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    void signedIn.register(async (admin) => {
      admin.addHook('preHandler', async (request, reply) => {
        const acting = personActing(request, services.clock);
        const check = await requireAdmin(services, acting, { token: request.sessionToken ?? '', signedInAt: request.signedInAt ?? 0 });
        if (check.ok) return;
        const back = request.method === 'GET' ? request.url : '/admin';
        const signInAgain = `/login?next=${encodeURIComponent(back)}&login_hint=${encodeURIComponent(request.signedInViewer.username)}`;
        return sendHtml(reply, gatePage(signedInContext(request, services), check, signInAgain), 403);
      });
      registerRoutes(admin, services);
    });
  });
}

function registerRoutes(admin: App, services: Services): void {
  const ctxOf = (request: FastifyRequest): SignedInCtx => signedInContext(request, services);
  const acting = (request: FastifyRequest): Acting<PersonActor> => personActing(request, services.clock);

  /** Runs `show`; an unknown id (a 404 of the services) answers the admin area's 404 page. */
  async function orNotFound(request: FastifyRequest, reply: FastifyReply, show: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await show();
    } catch (error) {
      const missing = error instanceof ApiError && error.status === 404 ? NOT_FOUND[error.code] : undefined;
      if (!missing) throw error;
      return sendHtml(reply, adminNotFoundPage(ctxOf(request), missing.section, missing.title, missing.detail), 404);
    }
  }

  /**
   * A confirmation's POST: runs the action; a refusal (last administrator, a transfer's new owner,
   * a reason too long) shows the confirmation again with the service's message and its status.
   */
  async function confirmed(request: FastifyRequest, reply: FastifyReply, confirmation: () => Promise<AdminConfirmation>, act: () => Promise<FastifyReply>): Promise<FastifyReply> {
    return orNotFound(request, reply, async () => {
      try {
        return await act();
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 404 || error.status >= 500) throw error;
        return sendHtml(reply, adminConfirmPage(ctxOf(request), { ...(await confirmation()), error: formErrorMessage(error) }), error.status);
      }
    });
  }

  admin.get('/admin', { schema: hide }, async (request, reply) => sendHtml(reply, overviewPage(ctxOf(request), await adminOverview(services, actorOf(request)))));

  // People ------------------------------------------------------------------------------------

  admin.get('/admin/people', { schema: { ...hide, querystring: PeopleQuery } }, async (request, reply) => {
    const q = request.query;
    const search = { q: q.q?.trim() ?? '', disabled: q.disabled !== undefined && q.disabled !== '', admins: q.admins !== undefined && q.admins !== '' };
    const pageNumber = q.page === undefined || q.page === '' ? 1 : Number(q.page);
    try {
      const found = await listPeopleForOperator(services, { query: search.q === '' ? undefined : search.q, disabled: search.disabled || undefined, admins: search.admins || undefined, page: pageNumber });
      return sendHtml(reply, peoplePage({ ctx: ctxOf(request), search, page: pageNumber, people: found.people, hasNext: found.next !== undefined }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      return sendHtml(reply, peoplePage({ ctx: ctxOf(request), search, page: 1, people: [], hasNext: false, error: { form: 'search', message: formErrorMessage(error) } }), 400);
    }
  });

  admin.get('/admin/people/:id', { schema: { ...hide, params: IdParams, querystring: DoneQuery } }, async (request, reply) =>
    orNotFound(request, reply, async () => {
      // A deleted account's row stays as "Deleted account": it is nobody the admin pages act on.
      const person = await findPersonForOperator(services, { id: request.params.id });
      return sendHtml(reply, personPage(ctxOf(request), await personSummary(services, person.id), DONE[request.query.done ?? '']));
    }),
  );

  const personName = (id: string): Promise<{ id: string; username: string }> => findPersonForOperator(services, { id });

  const disablePersonConfirmation = async (id: string, reason: string): Promise<AdminConfirmation> => {
    const [p, effects] = await Promise.all([personName(id), disableEffects(services, id)]);
    return {
      section: 'people',
      question: `Disable @${p.username}?`,
      effects: [
        `ends ${effects.sessions === 1 ? 'their 1 session' : `their ${effects.sessions} sessions`} and closes their open pages`,
        `revokes the ${effects.grants === 1 ? 'authorization' : `${effects.grants} authorizations`} they gave apps (refresh tokens and access tokens stop working)`,
        `stops the bots of ${effects.botApps === 1 ? '1 app' : `${effects.botApps} apps`} they own until they are enabled`,
      ],
      note: 'They cannot sign in until an administrator enables them; enabling does not bring back the revoked authorizations.',
      action: `/admin/people/${p.id}/disable`,
      button: 'Disable',
      cancel: `/admin/people/${p.id}`,
      field: { name: 'reason', label: 'Reason (optional)', hint: 'Kept in the audit log; not shown to them.', value: reason, required: false, autocomplete: 'off' },
    };
  };

  admin.get('/admin/people/:id/disable', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await disablePersonConfirmation(request.params.id, '')))),
  );

  admin.post('/admin/people/:id/disable', { schema: { ...hide, params: IdParams, body: ReasonBody } }, async (request, reply) => {
    const reason = request.body.reason ?? '';
    return confirmed(request, reply, () => disablePersonConfirmation(request.params.id, reason), async () => {
      await disablePerson(services, acting(request), request.params.id, reason);
      return reply.redirect(`/admin/people/${request.params.id}?done=disabled`, 303);
    });
  });

  admin.post('/admin/people/:id/enable', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    orNotFound(request, reply, async () => {
      await enablePerson(services, acting(request), request.params.id);
      return reply.redirect(`/admin/people/${request.params.id}?done=enabled`, 303);
    }),
  );

  const endSessionsConfirmation = async (id: string): Promise<AdminConfirmation> => {
    const [p, effects] = await Promise.all([personName(id), disableEffects(services, id)]);
    return {
      section: 'people',
      question: `End every session of @${p.username}?`,
      effects: [`signs them out of ${effects.sessions === 1 ? '1 session' : `${effects.sessions} sessions`} and closes their open pages`],
      note: 'They can sign in again; the apps they authorized keep their access.',
      action: `/admin/people/${p.id}/end-sessions`,
      button: 'End every session',
      cancel: `/admin/people/${p.id}`,
    };
  };

  admin.get('/admin/people/:id/end-sessions', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await endSessionsConfirmation(request.params.id)))),
  );

  admin.post('/admin/people/:id/end-sessions', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    confirmed(request, reply, () => endSessionsConfirmation(request.params.id), async () => {
      await endSessionsByOperator(services, acting(request), request.params.id);
      return reply.redirect(`/admin/people/${request.params.id}?done=sessions-ended`, 303);
    }),
  );

  const resetPasswordConfirmation = async (id: string): Promise<AdminConfirmation> => {
    const p = await personName(id);
    return {
      section: 'people',
      question: `Make a password reset link for @${p.username}?`,
      effects: [],
      note: 'The next page shows a link, once, where they choose a new password (as `gatehouse people reset-password`). Their current password works until they use it; using it ends their sessions.',
      action: `/admin/people/${p.id}/reset-password`,
      button: 'Make the link',
      cancel: `/admin/people/${p.id}`,
    };
  };

  admin.get('/admin/people/:id/reset-password', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await resetPasswordConfirmation(request.params.id)))),
  );

  // The link is a secret shown once: the POST's answer is the page (no redirect to a GET that could show it again).
  admin.post('/admin/people/:id/reset-password', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    confirmed(request, reply, () => resetPasswordConfirmation(request.params.id), async () => {
      const p = await personName(request.params.id);
      const link = await operatorResetLink(services, acting(request), p.username);
      return sendHtml(reply, resetLinkPage(ctxOf(request), p, link.resetUrl, link.expiresAt));
    }),
  );

  const resetSecondFactorConfirmation = async (id: string): Promise<AdminConfirmation> => {
    const p = await personName(id);
    return {
      section: 'people',
      question: `Remove the second factor of @${p.username}?`,
      effects: ['removes their authenticator app, their passkeys and their recovery codes'],
      note: 'For someone who lost them: they sign in with their password alone until they set up a second factor again. Check who is asking first.',
      action: `/admin/people/${p.id}/reset-second-factor`,
      button: 'Remove the second factor',
      cancel: `/admin/people/${p.id}`,
    };
  };

  admin.get('/admin/people/:id/reset-second-factor', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await resetSecondFactorConfirmation(request.params.id)))),
  );

  admin.post('/admin/people/:id/reset-second-factor', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    confirmed(request, reply, () => resetSecondFactorConfirmation(request.params.id), async () => {
      const p = await personName(request.params.id);
      await resetSecondFactors(services, acting(request), p.username);
      return reply.redirect(`/admin/people/${p.id}?done=second-factor-reset`, 303);
    }),
  );

  const deletePersonConfirmation = async (id: string, transferTo: string): Promise<AdminConfirmation> => {
    const [p, preview] = await Promise.all([personName(id), accountDeletionPreview(services, id)]);
    const owned = preview.ownedServers;
    return {
      section: 'people',
      question: `Delete @${p.username}?`,
      effects: [
        `deletes ${preview.apps === 1 ? 'the 1 app' : `the ${preview.apps} apps`} they own, with their bots`,
        `ends the access of ${preview.authorizedApps === 1 ? '1 app' : `${preview.authorizedApps} apps`} they authorized`,
        `removes them from ${preview.memberships === 1 ? '1 server' : `${preview.memberships} servers`} and signs them out everywhere`,
        ...(owned.length > 0 ? [`transfers the ${owned.length === 1 ? 'server' : `${owned.length} servers`} they own (${owned.map((s) => s.name).join(', ')}) to the member you name below`] : []),
      ],
      note: 'This cannot be undone. Their messages stay, shown as by “Deleted account”; the username becomes free.',
      action: `/admin/people/${p.id}/delete`,
      button: 'Delete account',
      cancel: `/admin/people/${p.id}`,
      field:
        owned.length > 0
          ? { name: 'transfer_to', label: 'Transfer their servers to', hint: 'The username of a member of each of those servers.', value: transferTo, required: true, autocomplete: 'off' }
          : undefined,
    };
  };

  admin.get('/admin/people/:id/delete', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await deletePersonConfirmation(request.params.id, '')))),
  );

  admin.post('/admin/people/:id/delete', { schema: { ...hide, params: IdParams, body: DeletePersonBody } }, async (request, reply) => {
    const to = request.body.transfer_to ?? '';
    return confirmed(request, reply, () => deletePersonConfirmation(request.params.id, to), async () => {
      await deletePersonTransferring(services, acting(request), request.params.id, to);
      return reply.redirect('/admin/people', 303);
    });
  });

  // Apps --------------------------------------------------------------------------------------

  admin.get('/admin/apps', { schema: { ...hide, querystring: ListQuery } }, async (request, reply) => {
    const owner = request.query.owner?.trim() ?? '';
    const disabled = request.query.disabled !== undefined && request.query.disabled !== '';
    const after = request.query.after === '' ? undefined : request.query.after;
    try {
      const found = await listApps(services, actorOf(request), { owner: owner === '' ? undefined : owner, disabled: disabled || undefined, after, limit: APPS_PAGE_MAX });
      return sendHtml(reply, appsPage({ ctx: ctxOf(request), owner, disabled, apps: found.apps, next: found.next, after }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return sendHtml(reply, appsPage({ ctx: ctxOf(request), owner, disabled, apps: [], next: undefined, after: undefined, error: { form: 'filter', message: error.code === 10013 ? 'Nobody has that username.' : formErrorMessage(error) } }), error.status === 404 ? 400 : error.status);
    }
  });

  admin.get('/admin/apps/:id', { schema: { ...hide, params: IdParams, querystring: DoneQuery } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, appPage(ctxOf(request), await showApp(services, actorOf(request), request.params.id), DONE[request.query.done ?? '']))),
  );

  const appConfirmation = async (request: FastifyRequest, id: string, what: 'disable' | 'delete', reason: string): Promise<AdminConfirmation> => {
    const shown = await showApp(services, actorOf(request), id);
    const a = shown.application;
    const effects = appEffects(shown.impact);
    return what === 'disable'
      ? {
          section: 'apps',
          question: `Disable ${a.name}?`,
          effects: [effects[0] ?? '', `makes its bot inert in ${shown.impact.serverInstalls === 1 ? '1 server' : `${shown.impact.serverInstalls} servers`} (installs stay)`],
          note: 'Its consent screen says it is unavailable until it is enabled; webhooks it created keep working. Enabling does not bring back the revoked authorizations.',
          action: `/admin/apps/${a.id}/disable`,
          button: 'Disable',
          cancel: `/admin/apps/${a.id}`,
          field: { name: 'reason', label: 'Reason (optional)', hint: 'Kept in the audit log.', value: reason, required: false, autocomplete: 'off' },
        }
      : {
          section: 'apps',
          question: `Delete ${a.name}?`,
          effects: [
            effects[0] ?? '',
            `removes its bot from ${shown.impact.serverInstalls === 1 ? '1 server' : `${shown.impact.serverInstalls} servers`} and its commands from ${shown.impact.userInstalls === 1 ? '1 person' : `${shown.impact.userInstalls} people`}`,
            `deletes ${shown.impact.incomingWebhooks.length === 1 ? 'the 1 webhook' : `the ${shown.impact.incomingWebhooks.length} webhooks`} created through its webhook.incoming authorizations`,
          ],
          note: 'This cannot be undone.',
          action: `/admin/apps/${a.id}/delete`,
          button: 'Delete app',
          cancel: `/admin/apps/${a.id}`,
        };
  };

  admin.get('/admin/apps/:id/disable', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await appConfirmation(request, request.params.id, 'disable', '')))),
  );

  admin.post('/admin/apps/:id/disable', { schema: { ...hide, params: IdParams, body: ReasonBody } }, async (request, reply) => {
    const reason = request.body.reason?.trim() ?? '';
    return confirmed(request, reply, () => appConfirmation(request, request.params.id, 'disable', reason), async () => {
      if ([...reason].length > AUDIT_REASON_MAX_LENGTH) throw new ApiError(400, 50035, `The reason must be ${AUDIT_REASON_MAX_LENGTH} or fewer characters.`);
      await disableApp(services, { ...acting(request), reason: reason === '' ? null : reason }, request.params.id);
      return reply.redirect(`/admin/apps/${request.params.id}?done=disabled`, 303);
    });
  });

  admin.post('/admin/apps/:id/enable', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    orNotFound(request, reply, async () => {
      await enableApp(services, acting(request), request.params.id);
      return reply.redirect(`/admin/apps/${request.params.id}?done=enabled`, 303);
    }),
  );

  admin.get('/admin/apps/:id/delete', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await appConfirmation(request, request.params.id, 'delete', '')))),
  );

  admin.post('/admin/apps/:id/delete', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    confirmed(request, reply, () => appConfirmation(request, request.params.id, 'delete', ''), async () => {
      await deleteAppAsOperator(services, acting(request), request.params.id);
      return reply.redirect('/admin/apps', 303);
    }),
  );

  // Servers -----------------------------------------------------------------------------------

  admin.get('/admin/servers', { schema: { ...hide, querystring: ListQuery } }, async (request, reply) => {
    const owner = request.query.owner?.trim() ?? '';
    const after = request.query.after === '' ? undefined : request.query.after;
    try {
      const found = await listServers(services, actorOf(request), { owner: owner === '' ? undefined : owner, after, limit: SERVERS_PAGE_MAX });
      return sendHtml(reply, serversPage({ ctx: ctxOf(request), owner, servers: found.servers, next: found.next, after }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return sendHtml(reply, serversPage({ ctx: ctxOf(request), owner, servers: [], next: undefined, after: undefined, error: { form: 'filter', message: error.code === 10013 ? 'Nobody has that username.' : formErrorMessage(error) } }), error.status === 404 ? 400 : error.status);
    }
  });

  admin.get('/admin/servers/:id', { schema: { ...hide, params: IdParams, querystring: DoneQuery } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, serverPage(ctxOf(request), await showServer(services, actorOf(request), request.params.id), DONE[request.query.done ?? '']))),
  );

  const transferConfirmation = async (request: FastifyRequest, id: string, to: string): Promise<AdminConfirmation> => {
    const shown = await showServer(services, actorOf(request), id);
    const s = shown.server;
    return {
      section: 'servers',
      question: `Transfer ${s.name}?`,
      effects: [`makes the member you name the owner of ${s.name} (${shown.contents.members + 1} members, ${shown.contents.channels} channels)`, `leaves ${shown.owner ? `@${shown.owner.username}` : 'the current owner'} a member, with their roles`],
      action: `/admin/servers/${s.id}/transfer`,
      button: 'Transfer ownership',
      cancel: `/admin/servers/${s.id}`,
      field: { name: 'to', label: 'New owner', hint: 'The username of a member of this server (a person, not a bot).', value: to, required: true, autocomplete: 'off' },
    };
  };

  admin.get('/admin/servers/:id/transfer', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await transferConfirmation(request, request.params.id, '')))),
  );

  admin.post('/admin/servers/:id/transfer', { schema: { ...hide, params: IdParams, body: TransferBody } }, async (request, reply) => {
    const to = request.body.to ?? '';
    return confirmed(request, reply, () => transferConfirmation(request, request.params.id, to), async () => {
      await transferServer(services, acting(request), request.params.id, { username: to });
      return reply.redirect(`/admin/servers/${request.params.id}?done=transferred`, 303);
    });
  });

  const deleteServerConfirmation = async (request: FastifyRequest, id: string): Promise<AdminConfirmation> => {
    const shown = await showServer(services, actorOf(request), id);
    return {
      section: 'servers',
      question: `Delete ${shown.server.name}?`,
      effects: serverEffects(shown.contents),
      note: 'This cannot be undone.',
      action: `/admin/servers/${shown.server.id}/delete`,
      button: 'Delete server',
      cancel: `/admin/servers/${shown.server.id}`,
    };
  };

  admin.get('/admin/servers/:id/delete', { schema: { ...hide, params: IdParams } }, async (request, reply) =>
    orNotFound(request, reply, async () => sendHtml(reply, adminConfirmPage(ctxOf(request), await deleteServerConfirmation(request, request.params.id)))),
  );

  admin.post('/admin/servers/:id/delete', { schema: { ...hide, params: IdParams, body: CsrfBody } }, async (request, reply) =>
    confirmed(request, reply, () => deleteServerConfirmation(request, request.params.id), async () => {
      await deleteServer(services, acting(request), request.params.id);
      return reply.redirect('/admin/servers', 303);
    }),
  );
}
