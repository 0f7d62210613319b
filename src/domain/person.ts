// The person record and its three presentations: the key surface (INTERFACE 2.1), the
// trimmed echo for keys without people:read, and the dashboard surface (2.3).
import { iso } from './time.js';

export interface PersonRow {
  id: string;
  workspace_id: string;
  external_id: string;
  email: string | null;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  avatar_url: string | null;
  timezone: string | null;
  locale: string | null;
  status: 'active' | 'unsubscribed' | 'bounced' | 'suppressed';
  unsubscribed_at: Date | null;
  unsubscribe_reason: string | null;
  traits: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  first_seen_at: Date;
  last_seen_at: Date;
}

export const PERSON_COLUMNS =
  'id, workspace_id, external_id, email, phone, first_name, last_name, avatar_url, timezone, locale, status, unsubscribed_at, unsubscribe_reason, traits, created_at, updated_at, first_seen_at, last_seen_at';

export function keyPerson(p: PersonRow) {
  return {
    id: p.id,
    workspace_id: p.workspace_id,
    userId: p.external_id,
    email: p.email,
    phone: p.phone,
    traits: p.traits,
    status: p.status,
    ...(p.unsubscribed_at ? { unsubscribed_at: iso(p.unsubscribed_at) } : {}),
    ...(p.unsubscribe_reason ? { unsubscribe_reason: p.unsubscribe_reason } : {}),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export function trimmedPerson(p: PersonRow) {
  return { id: p.id, workspace_id: p.workspace_id, userId: p.external_id };
}

export function dashboardPerson(p: PersonRow) {
  return {
    id: p.id,
    workspace_id: p.workspace_id,
    external_id: p.external_id,
    email: p.email,
    phone: p.phone,
    first_name: p.first_name,
    last_name: p.last_name,
    avatar_url: p.avatar_url,
    timezone: p.timezone,
    locale: p.locale,
    status: p.status,
    unsubscribed_at: iso(p.unsubscribed_at),
    unsubscribe_reason: p.unsubscribe_reason,
    attributes: p.traits,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
    first_seen_at: iso(p.first_seen_at),
    last_seen_at: iso(p.last_seen_at),
  };
}
