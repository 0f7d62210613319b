// Lists and their CSV imports (docs/audiences.md): the enumerations, once.
import { JOB_STATES } from './campaigns.js';

/** An import is a job (waiting, running) until it ends done or failed. */
export const IMPORT_STATES = [...JOB_STATES, 'done', 'failed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];
