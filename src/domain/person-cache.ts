// external_id → person id, per actor. Only the actor owning a workspace writes its people's
// identities (create, delete, merge), so it can keep this cache exact by forgetting on delete.
import { LRUCache } from 'lru-cache';

const ids = new LRUCache<string, string>({ max: 100_000 });
const key = (workspaceId: string, externalId: string) => workspaceId + '\0' + externalId;

export const personIds = {
  get: (workspaceId: string, externalId: string) => ids.get(key(workspaceId, externalId)),
  set: (workspaceId: string, externalId: string, id: string) => void ids.set(key(workspaceId, externalId), id),
  forget: (workspaceId: string, externalId: string) => void ids.delete(key(workspaceId, externalId)),
};
