// What an event trigger's or a wait's conditions read of a person (traits.*, person.*).
import type { PersonRow } from '../store/people.js';
import { PERSON_FIELDS } from '../domain/conditions.js';

/** What conditions read of a person (traits.*, person.*). */
export const personSubject = (p: PersonRow | undefined) => ({
  traits: p?.traits ?? {},
  person: p ? Object.fromEntries(PERSON_FIELDS.map((f) => [f, p[f as keyof PersonRow]])) : {},
});
