import { Type, type Static } from '@sinclair/typebox';

/**
 * Form bodies and queries of the developer portal. Fields are optional strings so that a missing
 * or empty field reaches the service, whose rules are shown beside the field on the re-rendered
 * form rather than as a bare 400 page. `_csrf` is checked by the pages context.
 */
const field = Type.Optional(Type.String());

export const AppParams = Type.Object({ id: Type.String({ maxLength: 32 }) });
export type AppParams = Static<typeof AppParams>;

export const ListQuery = Type.Object({ deleted: field });
export type ListQuery = Static<typeof ListQuery>;

export const DetailQuery = Type.Object({ saved: field, created: field });
export type DetailQuery = Static<typeof DetailQuery>;

export const CreateAppBody = Type.Object({
  name: field,
  clientType: Type.Optional(Type.Union([Type.Literal('confidential'), Type.Literal('public')])),
  _csrf: field,
});
export type CreateAppBody = Static<typeof CreateAppBody>;

export const GeneralBody = Type.Object({ name: field, description: field, iconUrl: field, _csrf: field });
export type GeneralBody = Static<typeof GeneralBody>;

export const OAuthSettingsBody = Type.Object({ redirectUris: field, _csrf: field });
export type OAuthSettingsBody = Static<typeof OAuthSettingsBody>;

export const CsrfOnlyBody = Type.Object({ _csrf: field });
export type CsrfOnlyBody = Static<typeof CsrfOnlyBody>;

/** The URL generator is a GET form; its fields use the OAuth parameter names they produce. */
export const UrlGeneratorQuery = Type.Object({
  scope: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 500 })),
  /** The permission picker's ticked names (core/permissions.ts), sent as `permissions` with bot. */
  permission: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })),
});
export type UrlGeneratorQuery = Static<typeof UrlGeneratorQuery>;

/** The Bot section's toggles: an unticked checkbox is absent from the form. */
export const BotSettingsBody = Type.Object({ botPublic: field, botRequireCodeGrant: field, _csrf: field });
export type BotSettingsBody = Static<typeof BotSettingsBody>;
