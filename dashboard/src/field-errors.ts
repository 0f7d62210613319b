// Herald's refusals in the dashboard's words, for every form: each detail's field (the API's dot
// path) named as the form labels it, and what is wrong said plainly instead of in the schema's
// words ("Time zone: not a known time zone", not `settings.timezone must match format
// "time-zone"`).
import { ApiError } from './api';

/** Names a workflow step by its index, as the builder does: "Step 1 (Email)". */
export type StepName = (index: number) => string;

/** A refusal as a form shows it: one line for its alert, and by field what to say beside it. */
export interface Refusal {
  summary: string;
  fields: Record<string, string>;
}

/** Labels of the API's fields that are not their last part said plainly (`#`: any index). */
const LABELS: Record<string, string> = {
  'settings.timezone': 'Time zone',
  'settings.send_policy.timezone': 'Policy time zone',
  'settings.send_policy.quiet_hours.start': 'Quiet hours: from',
  'settings.send_policy.quiet_hours.end': 'Quiet hours: to',
  'settings.send_policy.max_pushes_per_day': 'At most pushes per person per day',
  'settings.send_policy.max_pushes_per_window': 'At most pushes per person',
  'settings.send_policy.window_hours': 'In any this many hours',
  'trigger_config.timezone': 'Time zone',
  'trigger_config.cron': 'Cron pattern',
  'trigger_config.debounce': 'Debounce (seconds)',
  'trigger_config.delay_minutes': 'Delay (minutes)',
  'trigger_config.max_per_user': 'Max entries per person',
  'trigger_config.first_occurrence': 'Only the first time',
  'trigger_config.trait': "Trait holding each person's date",
  'trigger_config.offset_minutes': 'Offset (minutes)',
  'audience_config.match': 'People must match',
  'goal.event_name': 'Goal event',
  'goal.within': 'Converts within',
  'smtp.host': 'SMTP host',
  'smtp.username': 'SMTP username',
  'smtp.password': 'SMTP password',
  'smtp.max_connections': 'Connections at most',
  'smtp.rate_per_second': 'Messages per second at most',
  'webhooks.verification_key': 'SendGrid verification key',
  'webhooks.signing_key': 'Mailgun signing key',
  'webhooks.username': 'Postmark webhook user',
  'webhooks.password': 'Postmark webhook password',
  'twilio.account_sid': 'Account SID',
  'twilio.from': 'From number',
  'twilio.messaging_service_sid': 'Messaging Service SID',
  'apns.key_p8': 'The .p8 key',
  'fcm.service_account': 'Service-account key file',
  ip_whitelist: 'IP allowlist',
  suppression_type: 'Why',
  unsubscribe_reason: 'Reason',
  'from.email': 'From email',
  'from.name': 'From name',
};
/** A workflow step's fields as the builder labels them. */
const STEP_FIELDS: Record<string, { label: string; needed: string }> = {
  subject: { label: 'Subject', needed: 'a subject is needed' },
  body: { label: 'Body', needed: 'a body is needed' },
  title: { label: 'Title', needed: 'a title is needed' },
  html: { label: 'HTML', needed: 'an HTML part is needed' },
  text: { label: 'Text', needed: 'a text part is needed' },
  preheader: { label: 'Preheader', needed: 'a preheader is needed' },
  image_url: { label: 'Image URL', needed: 'an image URL is needed' },
  action_url: { label: 'Action URL', needed: 'an action URL is needed' },
  minutes: { label: 'wait (minutes)', needed: 'how long to wait is needed' },
  template_id: { label: 'template', needed: 'a template is needed' },
  id: { label: 'id', needed: 'an id is needed' },
};
const CONDITIONS: Record<string, string> = { 'audience_config.filters': 'Audience condition', 'trigger_config.filters': 'Filter' };
const WORDS: Record<string, string> = { url: 'URL', html: 'HTML', sid: 'SID', ip: 'IP', id: 'id', p8: 'p8' };

/** `event_names` → "Event names". */
const plain = (key: string) => {
  const words = key.split('_').map((w) => WORDS[w] ?? w);
  return words.join(' ').replace(/^[a-z]/, (c) => c.toUpperCase());
};

/** What the schema's words (ajv's) and Herald's rules mean, said plainly; anything else as Herald said it, less node ids. */
function plainMessage(message: string): string {
  const rules: [RegExp, (m: RegExpExecArray) => string][] = [
    [/^must match format "time-zone"$/, () => 'not a known time zone'],
    [/^must match format "email"$/, () => 'not an email address'],
    [/^must match format "(?:uri|url|iri)"$/, () => 'not a URL'],
    [/^must match format "(?:date-time|timestamp)"$/, () => 'not a date and time'],
    [/^must match format "(ipv4|ipv6)"$/, () => 'not an IP address'],
    [/^must match pattern /, () => 'not in the form asked for'],
    [/^must NOT have fewer than 1 characters$/, () => 'needed'],
    [/^must NOT have fewer than (\d+) characters$/, (m) => `at least ${m[1]} characters`],
    [/^must NOT have more than (\d+) characters$/, (m) => `too long: at most ${m[1]} characters`],
    [/^must NOT have fewer than 1 items$/, () => 'at least one is needed'],
    [/^must NOT have fewer than (\d+) items$/, (m) => `at least ${m[1]} are needed`],
    [/^must NOT have more than (\d+) items$/, (m) => `too many: at most ${m[1]}`],
    [/^must be >= (\S+)$/, (m) => `must be ${m[1]} or more`],
    [/^must be <= (\S+)$/, (m) => `must be ${m[1]} or less`],
    [/^must be > (\S+)$/, (m) => `must be more than ${m[1]}`],
    [/^must be < (\S+)$/, (m) => `must be less than ${m[1]}`],
    [/^must be integer$/, () => 'must be a whole number'],
    [/^must be number$/, () => 'must be a number'],
    [/^must be string$/, () => 'must be text'],
    [/^must be equal to one of the allowed values: (.*)$/, (m) => `must be one of ${m[1]}`],
    [/^is required(?: on \w+ node \S+)?(.*)$/, (m) => `needed${m[1]}`],
    [/^\w+ node \S+ has neither title nor body\b.*$/, () => 'needs a title or a body (or a template)'],
    [/^\w+ node \S+ has neither html nor text$/, () => 'needs an HTML or a text part'],
  ];
  for (const [rule, say] of rules) {
    const m = rule.exec(message);
    if (m) return say(m);
  }
  return message.replace(/ (?:on|of) \w+ node \S+/, '');
}

/** Where a detail is, as the form labels it, and what it says: `[label, message]`. */
function say(field: string, message: string, step?: StepName): [string, string] {
  const what = plainMessage(message);
  const node = /^workflow_definition\.nodes\.(\d+)(?:\.(\w+))?/.exec(field);
  if (node && step) {
    const name = step(Number(node[1]));
    const f = node[2] ? STEP_FIELDS[node[2]] : undefined;
    if (!node[2]) return [name, what];
    return what === 'needed' ? [name, f?.needed ?? `${plain(node[2])} is needed`] : [`${name}: ${f?.label ?? plain(node[2])}`, what];
  }
  const [, conditions, index, key] = /^((?:audience|trigger)_config\.filters)\.(\d+)(?:\.(\w+))?$/.exec(field) ?? [];
  if (conditions) return [`${CONDITIONS[conditions]} ${Number(index) + 1}${key ? `: ${key}` : ''}`, what];
  const [, lined, line] = /^(.+)\.(\d+)$/.exec(field) ?? [];
  if (lined && !LABELS[field]) return [`${label(lined)}, line ${Number(line) + 1}`, what];
  return [label(field), what];
}

const label = (field: string) => LABELS[field] ?? plain(field.slice(field.lastIndexOf('.') + 1));

/**
 * A refusal in the form's words: `steps` names workflow steps (the campaign builder). A refusal
 * without field details keeps Herald's message; one with them says each, after the headline of
 * an ACTIVATION_FAILED.
 */
export function refusal(error: ApiError, steps?: StepName): Refusal {
  const entries = Object.entries(error.fields);
  if (entries.length === 0) return { summary: error.message, fields: {} };
  const said = entries.map(([field, message]) => [field, ...say(field, message, steps)] as const);
  const lines = said.map(([, where, what]) => `${where}: ${what}`).join('; ');
  return {
    summary: error.code === 'ACTIVATION_FAILED' ? `The campaign cannot be activated: ${lines}` : lines,
    fields: Object.fromEntries(said.map(([field, , what]) => [field, what])),
  };
}
