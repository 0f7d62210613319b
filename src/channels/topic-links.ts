// The links of the preference center (docs/audiences.md): `{{ preferences_url }}` opens the
// person's preference page (/p/{token}); a topic's email carries, as its List-Unsubscribe and
// `{{ unsubscribe_url }}`, a link that unsubscribes from that topic only (/u/{token}). Both are
// MAC tokens as the one-click unsubscribe's (email/unsubscribe.ts), under keys of their own.
import { linkKey, openIds, sealIds } from './email/unsubscribe.js';

interface Links {
  publicUrl: string;
  unsubscribeKey: Buffer;
}

const keys = new WeakMap<Buffer, { preferences: Buffer; topic: Buffer }>();
function keysOf(unsubscribeKey: Buffer) {
  let k = keys.get(unsubscribeKey);
  if (!k) keys.set(unsubscribeKey, (k = { preferences: linkKey(unsubscribeKey, 'preferences'), topic: linkKey(unsubscribeKey, 'topic') }));
  return k;
}

/** The person's preference page, from the message `messageId` (which the token names, as an unsubscribe token does). */
export const preferencesUrl = (s: Links, workspaceId: string, personId: string, messageId: string): string =>
  `${s.publicUrl}/p/${sealIds(keysOf(s.unsubscribeKey).preferences, [workspaceId, personId, messageId])}`;

/** Unsubscribes the person from the topic only. */
export const topicUnsubscribeUrl = (s: Links, workspaceId: string, personId: string, topicId: string): string =>
  `${s.publicUrl}/u/${sealIds(keysOf(s.unsubscribeKey).topic, [workspaceId, personId, topicId])}`;

export function readPreferencesToken(unsubscribeKey: Buffer, token: string): { workspaceId: string; personId: string } | undefined {
  const ids = openIds(keysOf(unsubscribeKey).preferences, token);
  return ids && { workspaceId: ids[0], personId: ids[1] };
}

export function readTopicToken(unsubscribeKey: Buffer, token: string): { workspaceId: string; personId: string; topicId: string } | undefined {
  const ids = openIds(keysOf(unsubscribeKey).topic, token);
  return ids && { workspaceId: ids[0], personId: ids[1], topicId: ids[2] };
}
