// Phone numbers (DECISIONS §13): a person's `phone` normalised to E.164 with libphonenumber-js,
// a number stored without `+` read in the SMS channel's `default_country`.
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/** The E.164 form of `raw`, or undefined when it is no valid number. */
export function e164(raw: string | null | undefined, defaultCountry?: string): string | undefined {
  if (!raw?.trim()) return undefined;
  const n = parsePhoneNumberFromString(raw, defaultCountry as CountryCode | undefined);
  return n?.isValid() ? n.number : undefined;
}
