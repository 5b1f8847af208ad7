/** One Queue message per stored chunk of a large import (see import-export). */
export interface ImportChunkMessage {
  jobId: string;
  chunkIndex: number;
  /**
   * How many times this chunk was put back because it had to wait (for an earlier import
   * into the same project/environment, or for the feature chunks its dependencies need).
   * Waiting re-sends the message instead of retrying it, so it does not use up retries.
   */
  waits?: number;
}
