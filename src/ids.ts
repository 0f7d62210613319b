import { randomUUID } from 'node:crypto';
import { v7 } from 'uuid';

/** Time-ordered UUIDs (v7): ids sort by creation, which keeps indexes append-mostly. */
export const newId = (): string => v7();

/**
 * Random UUIDs (v4) for workspaces: the first 8 hex of a workspace id name it in API key
 * prefixes, where balancers hash them, so they must not be a timestamp.
 */
export const newWorkspaceId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
