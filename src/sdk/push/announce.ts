/**
 * Telling every isolate that the data moved, so that streams and hot snapshots refresh at once
 * instead of at their next revision tick. This isolate's own streams are woken directly.
 */
import { dataMayHaveMoved } from '../../db/coherence';
import type { Env } from '../../env';

/**
 * A write finished in this isolate and was answered with success (the admin and public routes'
 * after-answer hook, and the import queue after each batch): this isolate's streams look again
 * now. Never rejects.
 */
export async function announceWrite(_env: Env): Promise<void> {
  dataMayHaveMoved();
}
