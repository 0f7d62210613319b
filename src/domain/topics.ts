// Topics and subscriptions (docs/audiences.md): the enumeration of a topic's default, once.

/** What a person who never chose gets: sent to (opted_in) or not (opted_out). */
export const TOPIC_DEFAULTS = ['opted_in', 'opted_out'] as const;
export type TopicDefault = (typeof TOPIC_DEFAULTS)[number];
