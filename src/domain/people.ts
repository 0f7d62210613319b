// A person's consent status (README, Request bodies): active, or one of the states sends skip.
export const PERSON_STATUSES = ['active', 'unsubscribed', 'bounced', 'suppressed'] as const;
export type PersonStatus = (typeof PERSON_STATUSES)[number];
