/**
 * Where the staged items of an import go while the body streams in. Small imports stay in
 * memory and are applied in one D1 batch; once an import outgrows that, a job row is created
 * (status `staging`, invisible to everything else) and each chunk's items are written to D1
 * as parts of a few hundred kB, so the Worker's memory holds only the parts being filled.
 * On any error the staged rows are deleted; a request that dies half-way leaves a `staging`
 * job that the next import removes once it is an hour old.
 */
import { sql } from 'drizzle-orm';
import { CHUNK_FEATURES, PART_KEYS, SYNC_MAX_BYTES, SYNC_MAX_FEATURES, emptyRows, partText, type ChunkRows, type PartKey } from './plan';
import { prepare, runStatements, type Statement } from './store/statements';

/**
 * A part is written once a chunk's buffer reaches this size (under V8's 128 kB large-object
 * threshold: larger part strings churn the old generation and cost GC time)...
 */
const PART_BYTES = 96 * 1024;
/** ...and every buffer once all of them together hold this much (items arrive for many chunks). */
const BUFFERED_BYTES = 4 * 1024 * 1024;
/** Parts per D1 batch while staging. */
const PARTS_PER_BATCH = 12;
/** How old a `staging` job must be before another import may remove it as abandoned. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

export interface JobOwner {
  actorName: string;
  userId: number;
}

interface Buffer {
  rows: ChunkRows;
  bytes: number;
  parts: number;
  features: number;
}

export class ImportStager {
  private readonly buffers: Buffer[] = [];
  private buffered = 0;
  private names = 0;
  private pending: Statement[] = [];
  /** Set once the import is staged in D1 rather than held in memory. */
  private jobId: string | null = null;

  constructor(
    private readonly d1: D1Database | null,
    private readonly owner: JobOwner,
  ) {}

  /** The chunk of the next feature name seen for the first time. */
  assignChunk(): number {
    return Math.floor(this.names++ / CHUNK_FEATURES);
  }

  /** Bytes of staged items held in memory. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Is everything still in memory and small enough to be applied in one batch? */
  get inMemory(): boolean {
    return this.jobId === null;
  }

  async add(chunk: number, key: PartKey, json: string): Promise<void> {
    // Validation without a sink (the validate endpoint) keeps nothing.
    if (this.d1 === null) return;
    while (this.buffers.length <= chunk) this.buffers.push({ rows: emptyRows(), bytes: 0, parts: 0, features: 0 });
    const buffer = this.buffers[chunk]!;
    buffer.rows[key].push(json);
    buffer.bytes += json.length + 1;
    if (key === 'features') buffer.features++;
    this.buffered += json.length + 1;
    if (this.jobId === null) {
      if (this.buffered <= SYNC_MAX_BYTES && this.names <= SYNC_MAX_FEATURES) return;
      await this.startStaging();
      return;
    }
    if (buffer.bytes >= PART_BYTES) this.flush(chunk);
    if (this.buffered >= BUFFERED_BYTES) this.buffers.forEach((_, index) => this.flush(index));
    if (this.pending.length >= PARTS_PER_BATCH) await this.write();
  }

  /** All chunks merged into one (the synchronous path; only while in memory). */
  mergedRows(): ChunkRows {
    const merged = emptyRows();
    for (const buffer of this.buffers) {
      for (const key of PART_KEYS) merged[key].push(...buffer.rows[key]);
    }
    return merged;
  }

  /** Staged feature items per chunk (for the chunks' counts). */
  featureCounts(): number[] {
    return this.buffers.map((buffer) => buffer.features);
  }

  /** Writes whatever is still buffered, staging the import first if it was in memory. */
  async stageAll(): Promise<string> {
    if (this.jobId === null) await this.startStaging();
    this.buffers.forEach((_, index) => this.flush(index));
    await this.write();
    return this.jobId!;
  }

  /** Adds a chunk of its own (dependencies), written at once. */
  async stageExtraChunk(chunk: number, key: PartKey, items: string[]): Promise<void> {
    const rows = emptyRows();
    rows[key] = items;
    this.pending.push(this.partStatement(chunk, 0, partText(rows)));
    await this.write();
  }

  /** Removes everything staged so far (validation failed, or the request failed). */
  async discard(): Promise<void> {
    if (this.jobId === null || this.d1 === null) return;
    const id = this.jobId;
    this.pending = [];
    await runStatements(this.d1, [
      prepare(this.d1, sql`DELETE FROM import_job_parts WHERE job_id = ${id}`),
      prepare(this.d1, sql`DELETE FROM import_jobs WHERE id = ${id} AND status = 'staging'`),
    ]);
  }

  private async startStaging(): Promise<void> {
    const d1 = this.d1!;
    const id = crypto.randomUUID();
    const now = new Date();
    const abandoned = new Date(now.getTime() - ABANDONED_AFTER_MS).toISOString();
    await runStatements(d1, [
      prepare(
        d1,
        sql`DELETE FROM import_job_parts WHERE job_id IN (SELECT id FROM import_jobs WHERE status = 'staging' AND created_at < ${abandoned})`,
      ),
      prepare(d1, sql`DELETE FROM import_jobs WHERE status = 'staging' AND created_at < ${abandoned}`),
      // Project and environment are filled in when staging ends (the body may name them last).
      prepare(
        d1,
        sql`INSERT INTO import_jobs (id, project, environment, status, total_chunks, total_features, created_by, created_by_user_id, created_at)
        VALUES (${id}, '', '', 'staging', 0, 0, ${this.owner.actorName}, ${this.owner.userId}, ${now.toISOString()})`,
      ),
    ]);
    this.jobId = id;
    this.buffers.forEach((_, index) => this.flush(index));
    await this.write();
  }

  private flush(chunk: number): void {
    const buffer = this.buffers[chunk]!;
    if (buffer.bytes === 0) return;
    this.pending.push(this.partStatement(chunk, buffer.parts++, partText(buffer.rows)));
    this.buffered -= buffer.bytes;
    buffer.rows = emptyRows();
    buffer.bytes = 0;
  }

  private partStatement(chunk: number, part: number, text: string): Statement {
    return prepare(
      this.d1!,
      sql`INSERT INTO import_job_parts (job_id, chunk_index, part, payload) VALUES (${this.jobId}, ${chunk}, ${part}, jsonb(${text}))`,
    );
  }

  private async write(): Promise<void> {
    if (this.pending.length === 0) return;
    const statements = this.pending;
    this.pending = [];
    await runStatements(this.d1!, statements);
  }
}
