/** What deleting the account removes, shown before the person confirms (issue #38 §5: "see what goes"). */
export interface AccountDeletionPreview {
  /** Servers the person owns: they must be transferred or deleted first. */
  ownedServers: Array<{ id: string; name: string }>;
  /** Servers they would leave. */
  memberships: number;
  /** Apps (and their bots) they own, deleted with the account. */
  apps: number;
  /** Apps they authorized, whose grants and tokens end. */
  authorizedApps: number;
  /** A second factor is on: the form asks for a current code (or a passkey) too. */
  secondFactor: boolean;
  /** The person has a passkey: the form offers it as the second factor. */
  passkey: boolean;
}
