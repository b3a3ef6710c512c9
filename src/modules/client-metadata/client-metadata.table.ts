import type { DbId, DbInt } from '../../storage/types.js';

/** Issue #41 §3: the application a client ID metadata document's URL stands for. */
export interface ClientMetadataDocumentsTable {
  /** The client_id: the document's https URL, exactly as the client sends it. */
  url: string;
  application_id: DbId;
  fetched_at: DbInt;
}
