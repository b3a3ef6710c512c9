/** One of a person's passkeys as Settings → Security lists it (issue #38 §4). */
export interface PasskeyView {
  /** The credential id, base64url. */
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}
