// The CSV import runner of an actor (docs/audiences.md): imports are jobs (store/list-imports.ts)
// in the job loop (jobs/worker.ts), so the imports of several workspaces take turns. A claim
// streams the staged file from the offset of the first row not yet committed, through csv-parse
// (never the whole file in memory), a page of PAGE rows per transaction, at most
// PAGES_PER_CLAIM pages, then waits again for its next turn. The byte offset of the next row
// commits with each page, so a crash resumes exactly there.
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { parse, CsvError } from 'csv-parse';
import type { Db } from '../store/db.js';
import { isDataError } from '../store/db.js';
import type { Claimant } from '../store/leases.js';
import { importJobs, importPage, KEPT_ERRORS, recordProgress, type ImportJob, type Progress } from '../store/list-imports.js';
import { importColumns, importRow, type ImportRow } from '../domain/csv-import.js';
import { isUnstorable } from '../domain/storable-text.js';
import { JobWorker } from '../jobs/worker.js';
import { logger } from '../logger.js';

/** Rows per transaction. */
const PAGE = 2_000;
/** Pages per claim: then the import waits its turn again, behind the other workspaces'. */
const PAGES_PER_CLAIM = 25;
/** A longer row (quoted newlines included) ends the import: a runaway quote must not be buffered without end. */
const MAX_ROW_BYTES = 1024 * 1024;
const POLL_MS = 1_000;

interface Record_ {
  record: Buffer[];
  info: { bytes: number; lines: number };
}

const decoder = new TextDecoder();
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The row's cells as text, or why they cannot be stored. */
function cells(record: readonly Buffer[], columns: readonly string[] | null): string[] | string {
  const out: string[] = [];
  for (let i = 0; i < record.length; i++) {
    const b = record[i]!;
    const name = columns?.[i] ?? `field ${i + 1}`;
    if (!isUtf8(b)) return `${name} is not valid UTF-8`;
    const v = decoder.decode(b);
    if (isUnstorable(v)) return `${name} contains U+0000 or an unpaired surrogate, which cannot be stored`;
    out.push(v);
  }
  return out;
}

export class ListImports {
  private readonly worker: JobWorker<ImportJob>;

  constructor(
    private readonly db: Db,
    claimant: Claimant,
    /** Names this process's disk, where the files it received are staged. */
    stagedOn: string,
    /** HERALD_IMPORT_MAX_ROWS. */
    private readonly maxRows: number,
    /** The people of a committed page changed (traits, list membership): segments evaluate them (audiences/segments.ts). */
    private readonly touched: (workspaceId: string, personIds: readonly string[]) => Promise<void> = async () => {},
  ) {
    this.worker = new JobWorker<ImportJob>(db, claimant, {
      table: importJobs(stagedOn),
      page: 1,
      workspacePages: 1,
      pagesInFlight: 2,
      pollMs: POLL_MS,
      run: async (_ws, [job]) => this.runClaim(job!),
    });
  }

  start(): void {
    this.worker.start();
  }

  /** An import was staged: look at once. */
  nudge(): void {
    this.worker.nudge();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  private async runClaim(job: ImportJob): Promise<void> {
    const start = Number(job.byte_offset);
    let columns = job.columns;
    let offset = start;
    let row = job.rows_read;
    let kept = job.errors_kept;
    let pages = 0;
    let rows: ImportRow[] = [];
    let errors: { row: number; error: string }[] = [];
    let read = 0;
    let failed = 0;

    const commit = async (end?: Progress['end'], release = false): Promise<void> => {
      const progress: Progress = { columns, offset, read, added: rows.length, failed, errors, end, release };
      try {
        const people = await this.db.tx(async (q) => {
          const ids = await importPage(q, job.workspace_id, job.list_id, rows);
          await recordProgress(q, job.id, progress);
          return ids;
        });
        await this.touched(job.workspace_id, people);
      } catch (err) {
        if (!isDataError(err)) throw err;
        // The store refused these values: trying again cannot change that.
        const error = `rows ${row - read + 1} to ${row} were refused by the store (${(err as Error).message}); the rows before them were imported`;
        await this.db.tx((q) => recordProgress(q, job.id, { ...progress, read: 0, added: 0, failed: 0, errors: [], end: { state: 'failed', error } }));
        end = { state: 'failed' };
      }
      rows = [];
      errors = [];
      read = 0;
      failed = 0;
      if (end) await unlink(job.file).catch(() => undefined);
    };

    const stream = createReadStream(job.file, { start });
    const parser = parse({
      // Fields stay bytes, each checked as UTF-8 (csv-parse's own BOM option would decode them
      // all, invalid bytes included): the BOM is dropped from the header below.
      encoding: null,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      record_delimiter: ['\r\n', '\n', '\r'],
      max_record_size: MAX_ROW_BYTES,
    });
    stream.on('error', (err) => parser.destroy(err));
    stream.pipe(parser);
    try {
      for await (const { record, info } of parser as AsyncIterable<Record_>) {
        const next = start + info.bytes;
        if (columns === null) {
          if (start === 0 && record[0]?.subarray(0, 3).equals(BOM)) record[0] = record[0].subarray(3);
          const header = cells(record, null);
          const c = typeof header === 'string' ? `the header row: ${header}` : importColumns(header);
          if (typeof c === 'string') return await commit({ state: 'failed', error: c });
          columns = c;
          offset = next;
          continue;
        }
        if (row >= this.maxRows) {
          return await commit({ state: 'failed', error: `the file has more than ${this.maxRows} rows (HERALD_IMPORT_MAX_ROWS): the first ${this.maxRows} were read, the rest not` });
        }
        row++;
        read++;
        offset = next;
        const values = cells(record, columns);
        const r = typeof values === 'string' ? values : importRow(columns, values);
        if (typeof r === 'string') {
          failed++;
          if (kept < KEPT_ERRORS) {
            kept++;
            errors.push({ row, error: r });
          }
        } else rows.push(r);
        if (read >= PAGE) {
          pages++;
          const release = pages >= PAGES_PER_CLAIM;
          await commit(undefined, release);
          if (release) return;
        }
      }
      if (columns === null) return await commit({ state: 'failed', error: 'the file is empty: it needs a header row naming external_id or email' });
      await commit({ state: 'done' });
    } catch (err) {
      if (err instanceof CsvError) {
        logger.info('list import ends: the CSV cannot be read on', { import: job.id, code: err.code });
        return await commit({ state: 'failed', error: `row ${row + 1}: ${csvProblem(err)}; the rows before it were imported` });
      }
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return await commit({ state: 'failed', error: 'the staged file is gone (removed from the data dir)' });
      throw err;
    } finally {
      stream.destroy();
      parser.destroy();
    }
  }
}

/** A parse error in words (csv-parse's own message, without its dump of the field's bytes). */
function csvProblem(err: CsvError): string {
  if (err.code === 'CSV_MAX_RECORD_SIZE') return `longer than ${MAX_ROW_BYTES} bytes (a row, or a quoted field left open)`;
  return err.message.replace(/, value is .*$/s, '');
}
