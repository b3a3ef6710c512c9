import { DEFAULT_PASSWORD_COST, type PasswordCost } from '../core/password.js';
import type { Durability } from '../storage/connect.js';

/**
 * Every setting in one place (DESIGN §8). `loadConfig` reads a plain record (only main.ts and
 * cli/ pass `process.env`) and reports every violation at once, so an operator fixes them in
 * one go instead of one restart per mistake.
 */
export interface Config {
  port: number;
  host: string;
  /** SPEC's {base_url}: OAuth issuer, webhook URLs; no trailing slash. */
  baseUrl: string;
  /** Secure cookies and HSTS follow the base URL's scheme. */
  secureCookies: boolean;
  databaseUrl: string;
  redisUrl: string | undefined;
  serviceName: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Fastify's trustProxy: false, or a list of addresses/CIDRs of trusted proxies. */
  trustProxy: false | string[];
  /** Sessions end this long after sign-in, whatever happens. */
  sessionMaxAgeMs: number;
  /** ...and this long after their last use. */
  sessionIdleMs: number;
  passwordCost: PasswordCost;
  /** Largest accepted request body in bytes (413 beyond); routes with smaller needs read less (src/http/body-limits.ts). */
  bodyLimit: number;
  /** node:http requestTimeout: a request's headers and body must arrive within this (408 beyond). */
  requestTimeoutMs: number;
  /** node:http headersTimeout: a request's headers must arrive within this. */
  headersTimeoutMs: number;
  /** SQLite: acknowledge writes once in the WAL (`normal`) or once fsynced (`strict`). */
  durability: Durability;
  /** Accounts that may be created per hour from one address (IPv6 by /64); 0: no limit. */
  signUpsPerHour: number;
  /** Authorization codes one person may have issued to one app per 10 minutes; 0: no limit. */
  codesPerTenMinutes: number;
  /**
   * GATEHOUSE_SECRET: server secrets, never stored in the database; the first is used, the others
   * are still accepted (rotation). Empty: read or create `secretFile` (config/server-secret.ts).
   */
  secrets: string[];
  secretFile: string;
  /**
   * Issue #22: when set, the private parts of the ID-token signing keys are stored encrypted
   * (AES-256-GCM, key derived with scrypt) and cannot be used without it (docs/oidc.md §Keys).
   */
  oidcKeySecret: string | undefined;
  /**
   * Issue #26 §3, PostgreSQL: message partitions whose every message is older than this many
   * days are dropped by the maintenance job (storage/maintenance.ts); 0 (default) keeps all.
   */
  messageRetentionDays: number;
  /**
   * Issue #37 §5: audit log entries older than this many days are purged by the maintenance job
   * (storage/maintenance.ts); at least 1 (default 90): the log is always bounded.
   */
  auditRetentionDays: number;
  /**
   * DESIGN §4, issue #36 §4: outbound requests (http/outbound.ts) may reach loopback, private and
   * link-local addresses only when the operator allows it (tests, a laptop demo).
   */
  outboundAllowPrivate: boolean;
  /**
   * Issue #36 §1: live channel views (server-sent event streams) one person, and one client
   * address (IPv6 by /64), may hold open on one instance; 0: no limit. Read at start-up.
   */
  liveStreamsPerPerson: number;
  liveStreamsPerAddress: number;
  /**
   * Issue #38 §1: GATEHOUSE_SMTP_URL, `smtp://user:pass@host:587` (STARTTLS when offered),
   * `smtps://…` (TLS from the start) or `log:` (each mail written to the log, for development);
   * undefined (the default): this server sends no e-mail. Holds a password: never log it whole
   * (mail/mail.ts `redactSmtpUrl`).
   */
  smtpUrl: string | undefined;
  /** GATEHOUSE_MAIL_FROM: the From of every mail; default `<service name> <no-reply@<base URL's host>>`. */
  mailFrom: string;
  /** Issue #39: GATEHOUSE_ADMINS, usernames made instance administrators at start (a first set; nobody is removed). */
  admins: string[];
  /** Issue #39: GATEHOUSE_SIGN_UPS, who may create an account on the sign-up page. */
  signUps: 'open' | 'invite' | 'closed';
  /** Issue #39: GATEHOUSE_SERVER_CREATION, who may create servers (the CLI always may). */
  serverCreation: 'everyone' | 'admins';
  /** Issue #39: GATEHOUSE_APP_CREATION, who may create apps (the CLI always may). */
  appCreation: 'everyone' | 'admins';
  /**
   * Issue #41 §3: GATEHOUSE_CLIENT_REGISTRATION, RFC 7591 dynamic client registration: `off`
   * (no endpoint), `open` (anyone, limited per address), `token` (an operator's initial access token).
   */
  clientRegistration: 'off' | 'open' | 'token';
  /**
   * Issue #41 §3: GATEHOUSE_CLIENT_ID_METADATA (`on` by default): a client_id that is an https URL
   * is a client ID metadata document, fetched through the outbound client (client-metadata/).
   */
  clientIdMetadata: boolean;
  /**
   * Issue #42 §1: GATEHOUSE_FILE_STORE, where files' bytes live: `fs` (under `filesDir`) or
   * `postgres` (chunked rows in the database, shared by every instance); undefined: `postgres` on
   * PostgreSQL, `fs` on SQLite (chosen by services.ts from the database it connected to).
   */
  fileStore: 'fs' | 'postgres' | undefined;
  /** GATEHOUSE_FILES_DIR: the filesystem store's directory (default ./data/files). */
  filesDir: string;
  /** GATEHOUSE_ATTACHMENT_MAX_BYTES: the most bytes of files one message may carry (default 25 MiB, Discord's). */
  attachmentMaxBytes: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** The documented environment variables with their defaults (README's configuration table). */
export const ENVIRONMENT = {
  PORT: '8080',
  HOST: '127.0.0.1',
  GATEHOUSE_BASE_URL: 'http://localhost:{PORT}',
  DATABASE_URL: './data/gatehouse.db',
  REDIS_URL: '',
  GATEHOUSE_SERVICE_NAME: 'Gatehouse',
  LOG_LEVEL: 'info',
  TRUST_PROXY: '',
  GATEHOUSE_SESSION_MAX_AGE_DAYS: '30',
  GATEHOUSE_SESSION_IDLE_DAYS: '7',
  GATEHOUSE_BODY_LIMIT_BYTES: '1048576',
  GATEHOUSE_REQUEST_TIMEOUT_MS: '30000',
  GATEHOUSE_HEADERS_TIMEOUT_MS: '10000',
  GATEHOUSE_DURABILITY: 'normal',
  GATEHOUSE_SIGN_UPS_PER_HOUR: '10',
  GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN: '30',
  GATEHOUSE_SECRET: '',
  GATEHOUSE_SECRET_FILE: './data/gatehouse.secret',
  GATEHOUSE_OIDC_KEY_SECRET: '',
  GATEHOUSE_MESSAGE_RETENTION_DAYS: '0',
  GATEHOUSE_AUDIT_RETENTION_DAYS: '90',
  GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'false',
  GATEHOUSE_LIVE_STREAMS_PER_PERSON: '10',
  GATEHOUSE_LIVE_STREAMS_PER_ADDRESS: '100',
  GATEHOUSE_SMTP_URL: '',
  GATEHOUSE_MAIL_FROM: '',
  GATEHOUSE_ADMINS: '',
  GATEHOUSE_SIGN_UPS: 'open',
  GATEHOUSE_SERVER_CREATION: 'everyone',
  GATEHOUSE_APP_CREATION: 'everyone',
  GATEHOUSE_CLIENT_REGISTRATION: 'off',
  GATEHOUSE_CLIENT_ID_METADATA: 'on',
  GATEHOUSE_FILE_STORE: '',
  GATEHOUSE_FILES_DIR: './data/files',
  GATEHOUSE_ATTACHMENT_MAX_BYTES: '26214400',
} as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const DAY_MS = 24 * 60 * 60 * 1000;

export function loadConfig(env: Record<string, string | undefined>): Config {
  const problems: string[] = [];
  const read = (name: keyof typeof ENVIRONMENT): string => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? ENVIRONMENT[name] : value.trim();
  };
  const integer = (name: keyof typeof ENVIRONMENT, min: number, max: number): number => {
    const text = read(name);
    const value = Number(text);
    if (!/^[0-9]+$/.test(text) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${text}")`);
      return Number(ENVIRONMENT[name]);
    }
    return value;
  };

  const port = integer('PORT', 0, 65535);
  const host = read('HOST');

  let baseUrl = read('GATEHOUSE_BASE_URL').replace('{PORT}', String(port || 8080));
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('GATEHOUSE_BASE_URL must be an http or https URL');
    // RFC 8414 §2: the issuer has no query or fragment.
    if (url.search || url.hash) problems.push('GATEHOUSE_BASE_URL must not have a query or fragment');
    baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    problems.push(`GATEHOUSE_BASE_URL must be an absolute URL (got "${baseUrl}")`);
  }

  const databaseUrl = read('DATABASE_URL');
  // Issue #36 §4: a URL of another database (mysql://…) is not a file name. Only the scheme is
  // echoed, since the rest may hold a password. A drive letter (C:\…) is a path.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(databaseUrl)?.[1];
  if (scheme !== undefined && scheme.length > 1 && !/^(?:sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be a postgres:// or postgresql:// URL, a sqlite: URL or a file path (got a "${scheme}:" URL)`);
  }
  const redisUrl = read('REDIS_URL') || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must start with redis:// or rediss://');

  const serviceName = read('GATEHOUSE_SERVICE_NAME');
  if (serviceName.length > 64) problems.push('GATEHOUSE_SERVICE_NAME must be at most 64 characters');

  const logLevel = read('LOG_LEVEL') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const trustProxyText = read('TRUST_PROXY');
  const trustProxy = trustProxyText === '' ? false : trustProxyText.split(',').map((s) => s.trim()).filter(Boolean);

  const sessionMaxAgeMs = integer('GATEHOUSE_SESSION_MAX_AGE_DAYS', 1, 365) * DAY_MS;
  const sessionIdleMs = integer('GATEHOUSE_SESSION_IDLE_DAYS', 1, 365) * DAY_MS;
  const bodyLimit = integer('GATEHOUSE_BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024);
  // Issue #21 §1: a body or headers trickled in slowly must not hold a connection for ever.
  const requestTimeoutMs = integer('GATEHOUSE_REQUEST_TIMEOUT_MS', 1000, 10 * 60 * 1000);
  const headersTimeoutMs = integer('GATEHOUSE_HEADERS_TIMEOUT_MS', 1000, 10 * 60 * 1000);
  // node:http refuses a headers timeout longer than the request timeout.
  if (headersTimeoutMs > requestTimeoutMs) problems.push('GATEHOUSE_HEADERS_TIMEOUT_MS must not exceed GATEHOUSE_REQUEST_TIMEOUT_MS');

  const durability = read('GATEHOUSE_DURABILITY') as Durability;
  if (durability !== 'normal' && durability !== 'strict') problems.push(`GATEHOUSE_DURABILITY must be normal or strict (got "${durability}")`);

  const signUpsPerHour = integer('GATEHOUSE_SIGN_UPS_PER_HOUR', 0, 1_000_000);
  const codesPerTenMinutes = integer('GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN', 0, 1_000_000);

  const secrets = read('GATEHOUSE_SECRET')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // 32 characters of base64 or hex is at least 128 bits (DESIGN §3's floor for every secret).
  if (secrets.some((s) => s.length < 32)) problems.push('GATEHOUSE_SECRET must be at least 32 characters (each, when several are given)');
  const secretFile = read('GATEHOUSE_SECRET_FILE');
  const oidcKeySecret = read('GATEHOUSE_OIDC_KEY_SECRET') || undefined;
  // A short secret would make the encryption of the signing keys guessable offline.
  if (oidcKeySecret !== undefined && oidcKeySecret.length < 16) problems.push('GATEHOUSE_OIDC_KEY_SECRET must be at least 16 characters');

  const messageRetentionDays = integer('GATEHOUSE_MESSAGE_RETENTION_DAYS', 0, 36_500);
  const auditRetentionDays = integer('GATEHOUSE_AUDIT_RETENTION_DAYS', 1, 36_500);
  const outboundAllowPrivateText = read('GATEHOUSE_OUTBOUND_ALLOW_PRIVATE').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(outboundAllowPrivateText)) problems.push(`GATEHOUSE_OUTBOUND_ALLOW_PRIVATE must be true or false (got "${outboundAllowPrivateText}")`);
  const outboundAllowPrivate = outboundAllowPrivateText === 'true' || outboundAllowPrivateText === '1';
  const liveStreamsPerPerson = integer('GATEHOUSE_LIVE_STREAMS_PER_PERSON', 0, 1_000_000);
  const liveStreamsPerAddress = integer('GATEHOUSE_LIVE_STREAMS_PER_ADDRESS', 0, 1_000_000);

  const smtpUrl = read('GATEHOUSE_SMTP_URL') || undefined;
  if (smtpUrl !== undefined && smtpUrl !== 'log:') {
    // Issue #38 §1: only the scheme is echoed, since the rest may hold the SMTP password.
    let valid = false;
    try {
      const url = new URL(smtpUrl);
      valid = (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
    } catch {
      valid = false;
    }
    if (!valid) {
      const given = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(smtpUrl)?.[1];
      problems.push(`GATEHOUSE_SMTP_URL must be an smtp://host[:port] or smtps://host[:port] URL, or log: (got ${given === undefined ? 'no URL' : `a "${given}:" URL`})`);
    }
  }
  const mailFrom = read('GATEHOUSE_MAIL_FROM') || defaultMailFrom(serviceName, baseUrl);
  // RFC 5322 §3.4: an address, optionally with a display name before it in angle brackets.
  if (!/^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(mailFrom)) {
    problems.push(`GATEHOUSE_MAIL_FROM must be an e-mail address, optionally as "Name <address>" (got "${mailFrom}")`);
  }

  const fileStoreText = read('GATEHOUSE_FILE_STORE');
  let fileStore: Config['fileStore'];
  if (fileStoreText === 'fs' || fileStoreText === 'postgres') fileStore = fileStoreText;
  else if (fileStoreText !== '') problems.push(`GATEHOUSE_FILE_STORE must be fs or postgres (got "${fileStoreText}")`);
  const filesDir = read('GATEHOUSE_FILES_DIR');
  const attachmentMaxBytes = integer('GATEHOUSE_ATTACHMENT_MAX_BYTES', 1024, 1024 * 1024 * 1024);

  // Issue #39: who administers the instance, who may sign up, who may create servers and apps.
  const admins = read('GATEHOUSE_ADMINS').split(',').map((name) => name.trim()).filter(Boolean);
  const badAdmin = admins.find((name) => !/^[A-Za-z0-9_.]{2,32}$/.test(name));
  if (badAdmin !== undefined) problems.push(`GATEHOUSE_ADMINS must be usernames separated by commas (got "${badAdmin.slice(0, 40)}")`);
  const signUps = read('GATEHOUSE_SIGN_UPS') as Config['signUps'];
  if (!['open', 'invite', 'closed'].includes(signUps)) problems.push(`GATEHOUSE_SIGN_UPS must be open, invite or closed (got "${signUps}")`);
  const serverCreation = read('GATEHOUSE_SERVER_CREATION') as Config['serverCreation'];
  if (serverCreation !== 'everyone' && serverCreation !== 'admins') problems.push(`GATEHOUSE_SERVER_CREATION must be everyone or admins (got "${serverCreation}")`);
  const appCreation = read('GATEHOUSE_APP_CREATION') as Config['appCreation'];
  if (appCreation !== 'everyone' && appCreation !== 'admins') problems.push(`GATEHOUSE_APP_CREATION must be everyone or admins (got "${appCreation}")`);
  const clientRegistration = read('GATEHOUSE_CLIENT_REGISTRATION') as Config['clientRegistration'];
  if (!['off', 'open', 'token'].includes(clientRegistration)) problems.push(`GATEHOUSE_CLIENT_REGISTRATION must be off, open or token (got "${clientRegistration}")`);
  const clientIdMetadataText = read('GATEHOUSE_CLIENT_ID_METADATA').toLowerCase();
  if (clientIdMetadataText !== 'on' && clientIdMetadataText !== 'off') problems.push(`GATEHOUSE_CLIENT_ID_METADATA must be on or off (got "${clientIdMetadataText}")`);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host,
    baseUrl,
    secureCookies: baseUrl.startsWith('https:'),
    databaseUrl,
    redisUrl,
    serviceName,
    logLevel,
    trustProxy,
    sessionMaxAgeMs,
    sessionIdleMs: Math.min(sessionIdleMs, sessionMaxAgeMs),
    passwordCost: DEFAULT_PASSWORD_COST,
    bodyLimit,
    requestTimeoutMs,
    headersTimeoutMs,
    durability,
    signUpsPerHour,
    codesPerTenMinutes,
    secrets,
    secretFile,
    oidcKeySecret,
    messageRetentionDays,
    auditRetentionDays,
    outboundAllowPrivate,
    liveStreamsPerPerson,
    liveStreamsPerAddress,
    smtpUrl,
    mailFrom,
    admins,
    signUps,
    serverCreation,
    appCreation,
    clientRegistration,
    clientIdMetadata: clientIdMetadataText === 'on',
    fileStore,
    filesDir,
    attachmentMaxBytes,
  };
}

/** Issue #38 §1: mail comes from no-reply at the base URL's host unless the operator names a sender. */
function defaultMailFrom(serviceName: string, baseUrl: string): string {
  let host = 'localhost';
  try {
    host = new URL(baseUrl).hostname || host;
  } catch {
    // GATEHOUSE_BASE_URL's own problem is already reported.
  }
  const name = serviceName.replace(/["<>\\\r\n]/g, '');
  return `${name} <no-reply@${host.replace(/^\[|\]$/g, '')}>`;
}
