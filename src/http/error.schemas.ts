/**
 * What: the body of every API error a JSON route answers with (DESIGN §1, docs/errors.md), one
 * schema for the routes' response declarations and the API reference's "Error bodies".
 * Invariant: it matches what error-handler.ts sends: `code` and `message`, and `errors` only for
 * 50035 Invalid Form Body. OAuth protocol errors (RFC 6749 §5.2) and 429s have shapes of their
 * own (oauth.schemas.ts OAuthErrorBody, webhooks.schemas.ts RateLimitedBody).
 * Tested by test/http/openapi.test.ts (each error body documented once) and test/http/errors.test.ts.
 */
import { Type } from '@sinclair/typebox';

export const ApiErrorBody = Type.Object(
  {
    code: Type.Integer({ description: "Discord's JSON error code (docs/errors.md), e.g. 10015 Unknown Webhook, 50001 Missing Access, 50035 Invalid Form Body" }),
    message: Type.String(),
    errors: Type.Optional(Type.Unknown({ description: 'Invalid Form Body (50035) only: the problems at the paths of the request body, {field: {_errors: [{code, message}]}}' })),
  },
  { description: 'An API error (docs/errors.md)' },
);

/** A route's error responses: ApiErrorBody under each status given. */
export function apiErrorResponses<S extends number>(...statuses: S[]): Record<S, typeof ApiErrorBody> {
  const responses = {} as Record<S, typeof ApiErrorBody>;
  for (const status of statuses) responses[status] = ApiErrorBody;
  return responses;
}
