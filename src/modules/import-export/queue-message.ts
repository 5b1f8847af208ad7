/** One Queue message per stored chunk of a large import (see import-export). */
export interface ImportChunkMessage {
  jobId: string;
  chunkIndex: number;
}
