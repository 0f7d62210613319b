import { v7 } from 'uuid';

/** Time-ordered UUIDs (v7): ids sort by creation, which keeps indexes append-mostly. */
export const newId = (): string => v7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
