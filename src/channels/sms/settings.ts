// The SMS channel's settings (docs/channels.md): the Twilio account and sender, and the country
// of numbers stored without `+`; sealed in the `sms` column (store/channel-settings.ts).
import type { Queryable } from '../../store/db.js';
import { loadChannelSettings, saveChannelSettings, type StoredSettings } from '../../store/channel-settings.js';
import type { SettingsDeps, SettingsRoute } from '../channel.js';
import { sandboxed } from '../settings.js';
import { describeStored, merged, missing, refuse, why } from '../settings-input.js';
import { isPhoneCountry } from './phone.js';

export interface SmsChannel {
  twilio: { account_sid: string; auth_token: string; from?: string; messaging_service_sid?: string };
  /** ISO 3166 alpha-2: the country of numbers stored without `+`. */
  default_country?: string;
}

const NAME = 'sms';

/** The workspace's SMS settings; `lock` holds them until the transaction ends. */
export const loadSmsSettings = (q: Queryable, deps: Pick<SettingsDeps, 'settings'>, workspaceId: string, lock = false): Promise<StoredSettings<SmsChannel> | null> =>
  loadChannelSettings<SmsChannel>(q, deps.settings.secrets, workspaceId, NAME, lock);

/** The URLs Twilio calls back: a message's status, and a message coming in. */
export const smsCallbackUrls = (publicUrl: string, workspaceId: string) => ({
  status: `${publicUrl}/webhooks/sms/${workspaceId}/status`,
  inbound: `${publicUrl}/webhooks/sms/${workspaceId}/inbound`,
});

type Body = { twilio?: Record<string, unknown> | null; default_country?: string | null };

function smsSettings(stored: StoredSettings<SmsChannel> | null, body: Body): SmsChannel {
  const base = stored?.readable ? stored.settings : undefined;
  const twilio = merged(base?.twilio, body.twilio ?? undefined);
  const country = body.default_country === undefined ? base?.default_country : body.default_country;
  const problems = missing('twilio', twilio, ['account_sid', 'auth_token'], why(stored));
  if (twilio.from === undefined && twilio.messaging_service_sid === undefined) problems.push({ field: 'twilio.from', message: 'or twilio.messaging_service_sid is required: where the messages are sent from' });
  if (body.default_country && !isPhoneCountry(body.default_country)) problems.push({ field: 'default_country', message: 'is not a country code (ISO 3166 alpha-2) with known phone numbers' });
  if (problems.length > 0) refuse(problems);
  return { twilio, ...(country ? { default_country: country } : {}) } as SmsChannel;
}

export const SMS_SETTINGS: SettingsRoute = {
  async put(q, deps, workspaceId, raw) {
    const body = raw as Body;
    const settings = body.twilio === null ? null : smsSettings(await loadSmsSettings(q, deps, workspaceId, true), body);
    await saveChannelSettings(q, deps.settings.secrets, workspaceId, NAME, settings);
  },
  async describe(q, deps, workspaceId) {
    const stored = await loadSmsSettings(q, deps, workspaceId);
    const urls = smsCallbackUrls(deps.settings.publicUrl, workspaceId);
    return {
      ...describeStored(stored, (c) => ({
        twilio: { account_sid: c.twilio.account_sid, from: c.twilio.from ?? null, messaging_service_sid: c.twilio.messaging_service_sid ?? null },
        default_country: c.default_country ?? null,
      })),
      sandbox: !stored && sandboxed(deps.settings, NAME),
      status_callback_url: urls.status,
      inbound_url: urls.inbound,
    };
  },
};
