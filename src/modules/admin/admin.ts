import type { SessionView } from '../accounts/sessions.js';
import type { Application } from '../applications/applications.js';
import type { AuditRow } from '../audit/audit.js';
import type { Person } from '../directory/people.js';
import type { Server, ServerContents } from '../directory/servers.js';

/**
 * What the admin pages show (issue #39), as the operator's services answer it
 * (accounts/people-admin.service.ts, applications/apps-admin.service.ts,
 * directory/servers-admin.service.ts): pages render these and never query (DESIGN §2).
 */

/** Why the admin pages are closed to someone (people-admin.service.ts requireAdmin). */
export type AdminRefusalWhy = 'not-admin' | 'disabled' | 'no-second-factor' | 'sign-in-again';

/** A person with what only the operator sees. */
export interface AdminPerson extends Person {
  disabledReason: string | null;
  signupAddress: string | null;
}

/** A person's page: their account, servers, apps, sessions and latest security events. */
export interface AdminPersonView {
  person: AdminPerson;
  secondFactor: boolean;
  servers: ReadonlyArray<{ id: string; name: string; ownerId: string }>;
  apps: readonly Application[];
  sessions: readonly SessionView[];
  grantsInForce: number;
  recentSecurityEvents: readonly AuditRow[];
}

/** An app with its owner. */
export interface AdminApp {
  application: Application;
  owner: Person | undefined;
}

/** What disabling or deleting an app affects. */
export interface AdminAppImpact {
  grants: number;
  grantPeople: number;
  serverInstalls: number;
  userInstalls: number;
  incomingWebhooks: readonly unknown[];
}

/** A server with its owner. */
export interface AdminServer {
  server: Server;
  owner: Person | undefined;
}

export type AdminServerView = AdminServer & { contents: ServerContents };

/** A count the overview shows: `more` when there are more than it counted (one page's worth). */
export interface Tally {
  count: number;
  more: boolean;
}

export interface AdminOverview {
  admins: Tally;
  disabledPeople: Tally;
  disabledApps: Tally;
}
