// The SMS channel (docs/channels.md): a person's `phone` in E.164 (read in the channel's
// `default_country` when stored without `+`), Twilio's Messages API or the sandbox; Twilio's
// status and inbound callbacks. Quiet hours apply; the caps count pushes only.
import { channelFields } from '../../domain/campaigns.js';
import { InvalidInput } from '../../domain/errors.js';
import { unavailable, type AddressedChannel, type OpenChannel, type SendAnswer } from '../channel.js';
import { held } from '../decisions.js';
import { sendAddressed } from '../send.js';
import { sandboxed } from '../settings.js';
import { SMS_SETTINGS, loadSmsSettings, smsCallbackUrls } from './settings.js';
import { e164 } from './phone.js';
import { sandboxTwilio } from './sandbox.js';
import { sendTwilio, type TwilioOutcome } from './twilio.js';
import { wrapText } from '../../domain/tracking.js';

const answer = (o: TwilioOutcome, reported?: 'delivered'): SendAnswer => (o.status === 'sent' ? { status: 'sent', providerId: o.sid, ...(reported ? { reported } : {}) } : o);

const phoneOf = (country?: string) => (p: { phone: string | null }) => e164(p.phone, country);

const SANDBOX: OpenChannel = {
  provider: 'sandbox',
  address: phoneOf(),
  send: async (out) => answer(sandboxTwilio(out.address, out.messageId), 'delivered'),
};

export const sms: AddressedChannel = {
  name: 'sms',
  stopsAtBounce: false,
  policy: 'quiet_hours',
  noAddress: held('no_phone_number', 'The person has no valid phone number'),
  fields: channelFields,
  compose: (rendered) => ({ fields: { body: rendered.body ?? '' }, title: null, body: rendered.body ?? '' }),
  track: (fields, { wrap }) => (wrap && fields.body ? { ...fields, body: wrapText(fields.body, wrap) } : { ...fields }),
  preview: (rendered) => ({ body: rendered.body ?? '' }),
  async open(deps, workspaceId) {
    const stored = await loadSmsSettings(deps.db, deps, workspaceId);
    if (!stored && sandboxed(deps.settings, 'sms')) return SANDBOX;
    if (!stored?.readable) return unavailable('twilio', phoneOf(), stored ? "the sms channel's settings cannot be opened (set them again)" : 'no sms channel is configured');
    const settings = stored.settings;
    const statusCallback = smsCallbackUrls(deps.settings.publicUrl, workspaceId).status;
    const endpoint = deps.settings.endpoints.twilio ?? 'https://api.twilio.com';
    return {
      provider: 'twilio',
      address: phoneOf(settings.default_country),
      send: async (out) => answer(await sendTwilio(endpoint, settings, out.address, out.fields.body ?? '', statusCallback)),
    };
  },
  settings: SMS_SETTINGS,
  suppressionAddress(raw) {
    // Stored in E.164, so that one number has one suppression.
    const number = e164(raw);
    if (!number) throw new InvalidInput('Request body is invalid: address must be a phone number in E.164 (+ and the country code)', [{ field: 'address', message: 'must be a phone number in E.164' }]);
    return number;
  },
  sendNode: (deps, send, recipients) => sendAddressed(sms, deps, send, recipients),
};
