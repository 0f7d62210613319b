// The API's enumerations the pages offer, label and count, typed by the generated OpenAPI types
// (src/generated/openapi.d.ts) rather than restated. Each list is the keys of an object that
// `satisfies` a Record of the API's type, so `tsc -p dashboard` fails when the enumeration
// gains a member (a key missing) or loses one (a key too many), where a restated list would go
// on offering the old choices.
import type { Schemas } from './api';
import type { paths } from './generated/openapi';

type JsonBody<P extends keyof paths, M extends 'post' | 'put'> = NonNullable<paths[P][M]> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** The keys of `o`, in its order: the whole enumeration its `satisfies` names. */
const keysOf = <K extends string>(o: Record<K, unknown>) => Object.keys(o) as K[];

/** A message's channel. */
export type Channel = Schemas['MessageTemplate']['channel'];
export const CHANNEL_LABEL = { push: 'Push', email: 'Email', sms: 'SMS' } satisfies Record<Channel, string>;
export const CHANNELS = keysOf(CHANNEL_LABEL);

/** Every channel a message goes out on: those with templates, and the webhook step's calls. */
export type MessageChannel = keyof Schemas['CampaignStats']['by_channel'];
export const MESSAGE_CHANNEL_LABEL = { ...CHANNEL_LABEL, webhook: 'Webhook' } satisfies Record<MessageChannel, string>;
export const MESSAGE_CHANNELS = keysOf(MESSAGE_CHANNEL_LABEL);

/** A workflow step: a message of a channel, a delay, or a journey's split, wait for an event, random split or exit. */
export type NodeType = NonNullable<JsonBody<'/campaigns', 'post'>['workflow_definition']>['nodes'][number]['type'];
const LIST_STEP_LABEL = { ...MESSAGE_CHANNEL_LABEL, delay: 'Delay' } as const;
export const NODE_LABEL = { ...LIST_STEP_LABEL, split: 'Split', wait_for_event: 'Wait for event', random_split: 'Random split', exit: 'Exit' } satisfies Record<NodeType, string>;
/** Every step the builder adds, in the order it offers them. */
export const NODE_TYPES = keysOf(NODE_LABEL);

export type CampaignStatus = Schemas['Campaign']['status'];
export const CAMPAIGN_STATUSES = keysOf({ draft: true, scheduled: true, active: true, paused: true, completed: true, archived: true, failed: true } satisfies Record<CampaignStatus, true>);

export type Trigger = Schemas['Campaign']['trigger_type'];
export const TRIGGER_LABEL = { event: 'Event', webhook: 'Webhook', schedule: 'Schedule', dynamic_schedule: 'Dynamic schedule' } satisfies Record<Trigger, string>;
export const TRIGGER_TYPES = keysOf(TRIGGER_LABEL);

/** A campaign's counters of each channel, in the order the progress table shows them. */
export const CHANNEL_COUNTERS = keysOf(
  { sent: true, delivered: true, failed: true, skipped: true, policy_suppressed: true, bounced: true, complained: true, opened: true, clicked: true } satisfies Record<keyof Schemas['CampaignStats']['by_channel'][MessageChannel], true>,
);

export type PersonStatus = Schemas['DashboardPerson']['status'];
export const PERSON_STATUSES = keysOf({ active: true, unsubscribed: true, bounced: true, suppressed: true } satisfies Record<PersonStatus, true>);

/** The roles a member can be given (the owner's is not). */
export type Role = JsonBody<'/workspaces/{workspaceId}/members', 'post'>['role'];
export const ROLES = keysOf({ admin: true, member: true } satisfies Record<Role, true>);

type Smtp = NonNullable<JsonBody<'/workspaces/{workspaceId}/channels/email', 'put'>['smtp']>;
export type SmtpSecurity = NonNullable<Smtp['security']>;
export const SMTP_SECURITY_LABEL = {
  starttls: 'STARTTLS (port 587: upgrade required)',
  tls: 'TLS from the start (port 465)',
  none: 'None (plain text; only inside a private network)',
} satisfies Record<SmtpSecurity, string>;
export const SMTP_SECURITIES = keysOf(SMTP_SECURITY_LABEL);

/** The email providers whose delivery callbacks Herald verifies. */
export type EmailProvider = NonNullable<NonNullable<JsonBody<'/workspaces/{workspaceId}/channels/email', 'put'>['webhooks']>['provider']>;
export const EMAIL_PROVIDER_LABEL = { sendgrid: 'SendGrid', mailgun: 'Mailgun', postmark: 'Postmark' } satisfies Record<EmailProvider, string>;
export const EMAIL_PROVIDERS = keysOf(EMAIL_PROVIDER_LABEL);

type TokenSuppression = JsonBody<'/workspaces/{workspaceId}/push/suppressions', 'post'>;
export type PushPlatform = TokenSuppression['platform'];
export const PUSH_PLATFORMS = keysOf({ ios: true, android: true, web: true, huawei: true } satisfies Record<PushPlatform, true>);
export type TokenSuppressionType = TokenSuppression['suppression_type'];
export const TOKEN_SUPPRESSION_TYPES = keysOf({ uninstalled: true, disabled: true, invalid_token: true, opt_out: true } satisfies Record<TokenSuppressionType, true>);

/** The channels that send to an address (an email address, a phone number). */
export type AddressChannel = JsonBody<'/workspaces/{workspaceId}/suppressions', 'post'>['channel'];
export const ADDRESS_CHANNELS = keysOf({ email: true, sms: true } satisfies Record<AddressChannel, true>);
