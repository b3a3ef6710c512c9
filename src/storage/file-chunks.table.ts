/** GATEHOUSE_FILE_STORE=postgres: a file's bytes in numbered chunks (storage/database-blob-store.ts). */
export interface FileChunksTable {
  storage_key: string;
  seq: number;
  data: Buffer;
}
