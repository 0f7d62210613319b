// The SMS sandbox (docs/channels.md): Twilio's test numbers, as Herald's sandbox answers them:
// what Twilio's Messages API answers a send to `number`, classified by the same code as its
// real answers (sms/twilio.ts). A number accepted is then reported `delivered` through the
// callback applier.
import { classifyTwilio, type TwilioOutcome } from './twilio.js';

export function sandboxTwilio(number: string, messageId: string): TwilioOutcome {
  switch (number) {
    case '+15005550001':
      return classifyTwilio(400, { code: 21211, message: `The 'To' number ${number} is not a valid phone number. (sandbox)` }, null);
    case '+15005550009':
      return classifyTwilio(400, { code: 21614, message: "'To' number is not a valid mobile number (sandbox)" }, null);
    default:
      return { status: 'sent', sid: `SM${messageId.replace(/-/g, '')}` };
  }
}
