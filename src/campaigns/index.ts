// The campaign runtime's public surface: the loops an actor runs (event triggers, goals, schedule
// runs, the executor that walks enrolments through their workflows), the webhook trigger and its
// claims (one per Idempotency-Key across replicas), and enrolment.
export { enrolmentId, enrolPeople } from './enrol.js';
export { EventTriggers } from './event-triggers.js';
export { Goals } from './goals.js';
export { Executor } from './executor.js';
export { ScheduleRuns } from './schedule-runs.js';
export { runWebhookTrigger } from './webhook.js';
export { natsTriggerClaims, pgTriggerClaims, type HeldClaim, type TriggerClaim, type TriggerClaims, type TriggerOutcome } from './webhook-claims.js';
