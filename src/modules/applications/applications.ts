/** An OAuth2 application as the domain sees it (client_id = id). */
export interface Application {
  id: string;
  ownerId: string;
  name: string;
  description: string;
  iconUrl: string | null;
  /** Confidential apps authenticate with a client secret; public apps must use PKCE S256. */
  confidential: boolean;
  clientSecretHash: string | null;
  redirectUris: string[];
  botPublic: boolean;
  botRequireCodeGrant: boolean;
  botUserId: string | null;
  createdAt: number;
  updatedAt: number;
}

export const APP_NAME_MIN = 2;
export const APP_NAME_MAX = 32;
export const APP_DESCRIPTION_MAX = 400;
export const REDIRECT_URIS_MAX = 10;
