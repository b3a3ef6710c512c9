import { Type, type Static } from '@sinclair/typebox';

/**
 * Bodies of the interactions and app events settings: Discord's `PATCH /applications/@me` fields,
 * and the portal's forms (optional strings, so a bad value comes back beside its field).
 */
const Url = (description: string) => Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()], { description }));

/** Discord's fields; other keys of Discord's body (description, icon…) are ignored here. */
export const PatchApplicationBody = Type.Object({
  interactions_endpoint_url: Url('Where interactions are sent; verified with a signed PING (answered 200 {"type":1}) and a bad signature (answered 401). null or "" removes it.'),
  event_webhooks_url: Url('Where app events are sent; verified with a signed PING (type 0, answered 204) when events are on. null or "" removes it.'),
  event_webhooks_status: Type.Optional(Type.Integer({ description: '1 disabled, 2 enabled' })),
  event_webhooks_types: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16, description: 'APPLICATION_AUTHORIZED, APPLICATION_DEAUTHORIZED' })),
  icon: Type.Optional(Type.Union([Type.Null(), Type.String()], { description: 'Image data to upload (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB), or null to remove the icon' })),
});
export type PatchApplicationBody = Static<typeof PatchApplicationBody>;

const field = Type.Optional(Type.String());

export const WebhooksParams = Type.Object({ id: Type.String({ maxLength: 32 }) });
export type WebhooksParams = Static<typeof WebhooksParams>;

export const WebhooksQuery = Type.Object({ saved: field });
export type WebhooksQuery = Static<typeof WebhooksQuery>;

export const InteractionsForm = Type.Object({ interactionsEndpointUrl: field, _csrf: field });
export type InteractionsForm = Static<typeof InteractionsForm>;

/** An unticked checkbox is absent; ticked event types come as one value or several. */
export const EventsForm = Type.Object({
  eventWebhooksUrl: field,
  enabled: field,
  types: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 })])),
  _csrf: field,
});
export type EventsForm = Static<typeof EventsForm>;
