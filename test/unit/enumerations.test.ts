// Each enumeration is one tuple in src/domain/; the migrations written before it spell its SQL
// CHECK by hand, so these hold that each CHECK lists exactly the tuple's values.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { DEVICE_PLATFORMS, SUPPRESSION_TYPES } from '../../src/domain/tokens.js';
import { CAMPAIGN_RUN_STATES, CAMPAIGN_STATUSES, ENROLMENT_STATES, JOB_STATES, TRIGGER_TYPES } from '../../src/domain/campaigns.js';
import { ADDRESS_CHANNELS, ADDRESS_SUPPRESSION_TYPES, CHANNELS, DELIVERY_STATUSES, MESSAGE_STATUSES, PROVIDER_STATUSES, TEMPLATE_CHANNELS } from '../../src/domain/messages.js';
import { PERSON_STATUSES } from '../../src/domain/people.js';
import { KEY_ENVIRONMENTS, KEY_TYPES } from '../../src/domain/principals.js';
import { ROLES } from '../../src/domain/roles.js';
import { WEBHOOK_DELIVERY_STATES } from '../../src/domain/webhook-events.js';
import { IMPORT_STATES } from '../../src/domain/lists.js';
import { SEGMENT_STATES } from '../../src/domain/segments.js';

const DIR = new URL('../../src/store/migrations/', import.meta.url);
const MIGRATIONS = readdirSync(DIR).map((file) => readFileSync(new URL(file, DIR), 'utf8')).join('\n');

/** The values of every `CHECK (<column> IN (...))` the migrations write for `column`, one list per CHECK. */
function checksOf(column: string): string[][] {
  const re = new RegExp(`CHECK \\(${column} IN \\(([^)]*)\\)\\)`, 'g');
  return [...MIGRATIONS.matchAll(re)].map((m) => [...m[1]!.matchAll(/'([^']*)'/g)].map((v) => v[1]!));
}

const sorted = (values: readonly string[]): string[] => [...values].sort();

const CASES: [string, string, readonly string[], number][] = [
  ['role', 'ROLES', ROLES, 1],
  ['key_type', 'KEY_TYPES', KEY_TYPES, 1],
  ['environment', 'KEY_ENVIRONMENTS', KEY_ENVIRONMENTS, 1],
  ['platform', 'DEVICE_PLATFORMS', DEVICE_PLATFORMS, 1],
  ['trigger_type', 'TRIGGER_TYPES', TRIGGER_TYPES, 1],
];

for (const [column, name, tuple, n] of CASES) {
  t.test(`${column}: ${name}`, async (t) => {
    const checks = checksOf(column);
    t.equal(checks.length, n);
    for (const check of checks) t.same(sorted(check), sorted(tuple));
  });
}

// Columns of one name with several enumerations: each CHECK matches exactly one of them.
t.test('suppression_type: tokens and addresses', async (t) => {
  t.same(checksOf('suppression_type').map(sorted).sort(), [SUPPRESSION_TYPES, ADDRESS_SUPPRESSION_TYPES].map(sorted).sort());
});
t.test('channel: messages and templates, suppressed addresses', async (t) => {
  // message_templates' first CHECK (push only) was replaced by migration 203.
  // messages' CHECK of migration 201 (push, email, sms) was replaced by migration 480's.
  t.same(checksOf('channel').map(sorted).sort(), [['push'], ['push', 'email', 'sms'], CHANNELS, TEMPLATE_CHANNELS, ADDRESS_CHANNELS].map(sorted).sort());
});

// `status` and `state` name several columns: each CHECK matches exactly one tuple.
t.test('status and state columns', async (t) => {
  // push_messages' first CHECK, replaced by migration 201 when email and SMS added the provider's statuses.
  const beforeEmail = MESSAGE_STATUSES.filter((s) => !(PROVIDER_STATUSES as readonly string[]).includes(s));
  // campaign_runs' first CHECK, replaced by migration 420 when a run became a job ('enrolling' was its running state).
  const runsBeforeJobs = ['enrolling', ...CAMPAIGN_RUN_STATES.filter((s) => !(JOB_STATES as readonly string[]).includes(s))];
  // campaign_enrolments' first CHECK, replaced by migration 510 when journeys added 'held_out', which
  // migration 530 replaced when goals added 'converted'.
  const enrolmentsBeforeGoals = ENROLMENT_STATES.filter((s) => s !== 'converted');
  const enrolmentsBeforeHoldout = enrolmentsBeforeGoals.filter((s) => s !== 'held_out');
  const tuples = [PERSON_STATUSES, beforeEmail, MESSAGE_STATUSES, DELIVERY_STATUSES, CAMPAIGN_STATUSES, ENROLMENT_STATES, enrolmentsBeforeGoals, enrolmentsBeforeHoldout, runsBeforeJobs, CAMPAIGN_RUN_STATES, WEBHOOK_DELIVERY_STATES, IMPORT_STATES, SEGMENT_STATES].map(sorted);
  const checks = [...checksOf('status'), ...checksOf('state')].map(sorted);
  t.same(checks.sort(), [...tuples].sort());
});
