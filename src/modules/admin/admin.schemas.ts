import { Type, type Static } from '@sinclair/typebox';

/**
 * Queries and form bodies of the admin pages (issue #39). Every field is an optional string, so
 * that a malformed value reaches the service, whose refusal the page shows (a clear 4xx page),
 * rather than a bare 400. `_csrf` is checked by the pages context before the handler runs.
 */
const field = Type.Optional(Type.String());

export const IdParams = Type.Object({ id: Type.String() });
export type IdParams = Static<typeof IdParams>;

/** /admin/people: search text, the two filters (checkboxes: present when ticked), a 1-based page. */
export const PeopleQuery = Type.Object({ q: field, disabled: field, admins: field, page: field });
export type PeopleQuery = Static<typeof PeopleQuery>;

/** /admin/apps and /admin/servers: an owner's username, the disabled filter (apps), the next page's start. */
export const ListQuery = Type.Object({ owner: field, disabled: field, after: field });
export type ListQuery = Static<typeof ListQuery>;

export const CsrfBody = Type.Object({ _csrf: field });
export type CsrfBody = Static<typeof CsrfBody>;

/** Disabling a person or an app: the reason is kept in the audit log. */
export const ReasonBody = Type.Object({ reason: field, _csrf: field });
export type ReasonBody = Static<typeof ReasonBody>;

/** Deleting a person: who receives the servers they own (a username), when they own any. */
export const DeletePersonBody = Type.Object({ transfer_to: field, _csrf: field });
export type DeletePersonBody = Static<typeof DeletePersonBody>;

/** Transferring a server: the new owner's username (Discord's `owner_id` names a user id; a page asks for the name). */
export const TransferBody = Type.Object({ to: field, _csrf: field });
export type TransferBody = Static<typeof TransferBody>;

/** `?done=…` after an action (post/redirect/get): which notice the page shows. */
export const DoneQuery = Type.Object({ done: field });
export type DoneQuery = Static<typeof DoneQuery>;
