/**
 * Dynamic client registration (issue #41 §3; RFC 7591, RFC 7592): the metadata rules and the
 * wire shapes. Pure: no Fastify, no Kysely.
 */
import { REGISTER_PATH } from '../oauth/metadata.js';
import { checkAppIconUrl, checkAppName, checkRedirectUris, type Application } from '../applications/applications.js';

/**
 * Who owns a registered application: the system account of migration 2026-11-29-80 (a disabled
 * bot-flagged row with id 4194303 that nobody signs in as). No person owns a registered app, so none
 * manages it in the portal; the operator does, with the CLI.
 */
export const REGISTRATION_OWNER_ID = '4194303';

/** True when the application registered itself (RFC 7591) instead of being created by a person or the operator. */
export function isRegisteredApplication(app: Pick<Application, 'ownerId'>): boolean {
  return app.ownerId === REGISTRATION_OWNER_ID;
}

/** RFC 7591 §2: the token endpoint authentication methods Gatehouse registers. */
export const REGISTRATION_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type RegistrationAuthMethod = (typeof REGISTRATION_AUTH_METHODS)[number];

/** Registrations one address may make per hour (issue #41 §3: "limited per address"). */
export const REGISTRATIONS_PER_HOUR = 10;

/** What a client registered, as stored and answered (RFC 7591 §2 names). */
export interface RegistrationMetadata {
  redirect_uris: string[];
  client_name: string;
  token_endpoint_auth_method: RegistrationAuthMethod;
  grant_types: string[];
  response_types: string[];
  scope?: string;
  logo_uri?: string;
  client_uri?: string;
}

/** The part of the metadata without a column in `applications`, kept as JSON in `registered_clients`. */
export type StoredMetadata = Pick<RegistrationMetadata, 'token_endpoint_auth_method' | 'grant_types' | 'response_types' | 'scope' | 'client_uri'>;

/** RFC 7591 §3.2.2's two metadata errors, with a description that names the field. */
export interface RegistrationProblem {
  error: 'invalid_redirect_uri' | 'invalid_client_metadata';
  description: string;
}

export type CheckedRegistration = { ok: true; value: RegistrationMetadata } | { ok: false; problem: RegistrationProblem };

/** The name a client gets when it sends no `client_name` (RFC 7591 §2: optional). */
export const UNNAMED_CLIENT = 'Unnamed client';

const SCOPE_MAX = 1000;
const CLIENT_URI_MAX = 2048;
/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces. */
const SCOPE_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

const metadataError = (description: string): CheckedRegistration => ({ ok: false, problem: { error: 'invalid_client_metadata', description } });

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? [...value] : undefined;
}

/**
 * Checks a registration request (RFC 7591 §2, §3.1) against what Gatehouse supports. Unknown
 * fields are ignored (§2: "The authorization server MUST ignore any client metadata sent by the
 * client that it does not understand"). `grantTypes` is the grant registry's list.
 * - `token_endpoint_auth_method`: `none` makes a public client (PKCE S256 required as for every
 *   public app), `client_secret_basic` (the §2 default) or `client_secret_post` a confidential one.
 * - `grant_types` (default `authorization_code`) from the registry; `client_credentials` only for
 *   a confidential client. `response_types` (default `code` with the code grant) is `code` or
 *   nothing, and `code` goes with `authorization_code` both ways (§2.1).
 * - `redirect_uris`: required with the code grant, checked by the portal's rules for the client
 *   type (https; http on 127.0.0.1 and [::1]; private-use schemes for public clients, RFC 8252).
 * - `client_name`, `logo_uri`: the portal's name and https image rules; `client_uri` an https URL;
 *   `scope` RFC 6749 §3.3 tokens (recorded: what a token may carry is decided at authorization).
 */
export function checkRegistration(body: unknown, serviceName: string, grantTypes: readonly string[]): CheckedRegistration {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return metadataError('The request body must be a JSON object of client metadata (RFC 7591 §3.1).');
  const raw = body as Record<string, unknown>;

  const method = raw.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof method !== 'string' || !(REGISTRATION_AUTH_METHODS as readonly string[]).includes(method)) {
    return metadataError(`token_endpoint_auth_method must be one of ${REGISTRATION_AUTH_METHODS.join(', ')}.`);
  }
  const authMethod = method as RegistrationAuthMethod;
  const confidential = authMethod !== 'none';

  const grants = raw.grant_types === undefined ? ['authorization_code'] : stringList(raw.grant_types);
  if (!grants || grants.length === 0) return metadataError('grant_types must be a non-empty array of strings.');
  const unknownGrant = grants.find((g) => !grantTypes.includes(g));
  if (unknownGrant !== undefined) return metadataError(`grant_types: ${unknownGrant} is not supported; supported are ${grantTypes.join(', ')}.`);
  if (!confidential && grants.includes('client_credentials')) return metadataError('grant_types: client_credentials needs a confidential client (token_endpoint_auth_method client_secret_basic or client_secret_post).');
  const codeGrant = grants.includes('authorization_code');

  const responses = raw.response_types === undefined ? (codeGrant ? ['code'] : []) : stringList(raw.response_types);
  if (!responses) return metadataError('response_types must be an array of strings.');
  if (responses.some((r) => r !== 'code')) return metadataError('response_types: only code is supported.');
  // RFC 7591 §2.1: response type code goes with the authorization_code grant.
  if (responses.includes('code') !== codeGrant) return metadataError('response_types code and grant_type authorization_code go together (RFC 7591 §2.1).');

  const uris = raw.redirect_uris === undefined ? [] : stringList(raw.redirect_uris);
  if (!uris) return { ok: false, problem: { error: 'invalid_redirect_uri', description: 'redirect_uris must be an array of strings.' } };
  if (codeGrant && uris.length === 0) return { ok: false, problem: { error: 'invalid_redirect_uri', description: 'redirect_uris is required for the authorization_code grant.' } };
  const uriProblem = checkRedirectUris(uris, confidential)[0];
  if (uriProblem) return { ok: false, problem: { error: 'invalid_redirect_uri', description: uriProblem.message } };

  if (raw.client_name !== undefined && typeof raw.client_name !== 'string') return metadataError('client_name must be a string.');
  const name = checkAppName(typeof raw.client_name === 'string' && raw.client_name.trim() !== '' ? raw.client_name : UNNAMED_CLIENT, serviceName);
  if (!name.ok) return metadataError(`client_name: ${name.message}`);

  if (raw.logo_uri !== undefined && typeof raw.logo_uri !== 'string') return metadataError('logo_uri must be a string.');
  const logo = checkAppIconUrl(raw.logo_uri as string | undefined);
  if (!logo.ok) return metadataError(`logo_uri: ${logo.message}`);

  if (raw.client_uri !== undefined && (typeof raw.client_uri !== 'string' || !isHttpsUrl(raw.client_uri))) return metadataError(`client_uri must be an https URL of at most ${CLIENT_URI_MAX} characters.`);

  if (raw.scope !== undefined && (typeof raw.scope !== 'string' || raw.scope.length > SCOPE_MAX || !SCOPE_PATTERN.test(raw.scope))) {
    return metadataError(`scope must be space-separated scope tokens (RFC 6749 §3.3), at most ${SCOPE_MAX} characters.`);
  }

  return {
    ok: true,
    value: {
      redirect_uris: uris,
      client_name: name.value,
      token_endpoint_auth_method: authMethod,
      grant_types: [...new Set(grants)],
      response_types: [...new Set(responses)],
      ...(typeof raw.scope === 'string' ? { scope: raw.scope } : {}),
      ...(logo.value !== null ? { logo_uri: logo.value } : {}),
      ...(typeof raw.client_uri === 'string' ? { client_uri: raw.client_uri } : {}),
    },
  };
}

function isHttpsUrl(value: string): boolean {
  if (value.length > CLIENT_URI_MAX || !/^https:\/\/[^\s]+$/.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/** The stored part of the metadata. */
export function storedMetadata(m: RegistrationMetadata): StoredMetadata {
  return {
    token_endpoint_auth_method: m.token_endpoint_auth_method,
    grant_types: m.grant_types,
    response_types: m.response_types,
    ...(m.scope !== undefined ? { scope: m.scope } : {}),
    ...(m.client_uri !== undefined ? { client_uri: m.client_uri } : {}),
  };
}

/** The metadata of a registered application: its row's name, redirect URIs and icon with the stored rest. */
export function registeredMetadata(app: Pick<Application, 'name' | 'redirectUris' | 'iconUrl'>, stored: StoredMetadata): RegistrationMetadata {
  return {
    redirect_uris: app.redirectUris,
    client_name: app.name,
    ...stored,
    ...(app.iconUrl !== null ? { logo_uri: app.iconUrl } : {}),
  };
}

/** RFC 7591 §3.2.1 / RFC 7592 §3: the client information response. */
export interface ClientInformation extends RegistrationMetadata {
  client_id: string;
  /** Only in the registration response: stored as a hash, it cannot be shown again. */
  client_secret?: string;
  client_id_issued_at: number;
  /** Present with a secret: 0, the secret does not expire (RFC 7591 §3.2.1). */
  client_secret_expires_at?: number;
  registration_access_token: string;
  registration_client_uri: string;
}

/** RFC 7592 §1: where a registered client reads, updates and deletes its registration. */
export function registrationClientUri(baseUrl: string, clientId: string): string {
  return `${baseUrl}${REGISTER_PATH}/${clientId}`;
}


export function clientInformation(
  baseUrl: string,
  app: Pick<Application, 'id' | 'name' | 'redirectUris' | 'iconUrl' | 'createdAt' | 'confidential'>,
  stored: StoredMetadata,
  registrationAccessToken: string,
  clientSecret: string | null,
): ClientInformation {
  return {
    client_id: app.id,
    ...(clientSecret !== null ? { client_secret: clientSecret } : {}),
    client_id_issued_at: Math.floor(app.createdAt / 1000),
    ...(app.confidential ? { client_secret_expires_at: 0 } : {}),
    registration_access_token: registrationAccessToken,
    registration_client_uri: registrationClientUri(baseUrl, app.id),
    ...registeredMetadata(app, stored),
  };
}

/** `Bearer <token>` from an Authorization header (RFC 6750 §2.1), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization ?? '');
  return match ? match[1] : undefined;
}

/** `--expires-in` of `gatehouse apps registration-token`: `30m`, `12h`, `7d`, or `never`; ms or null. */
export function parseExpiresIn(text: string): number | null | undefined {
  if (text === 'never') return null;
  const match = /^([1-9][0-9]{0,4})([mhd])$/.exec(text);
  if (!match) return undefined;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}
