// Phone numbers (docs/channels.md): a person's `phone` normalised to E.164 with libphonenumber-js,
// a number stored without `+` read in the SMS channel's `default_country`.
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/** Whether `code` (ISO 3166 alpha-2) names a country whose numbers can be read without `+`. */
export const isPhoneCountry = (code: string): boolean => isSupportedCountry(code);

/** The E.164 form of `raw`, or undefined when it is no valid number. */
export function e164(raw: string | null | undefined, defaultCountry?: string): string | undefined {
  if (!raw?.trim()) return undefined;
  const n = parsePhoneNumberFromString(raw, defaultCountry as CountryCode | undefined);
  return n?.isValid() ? n.number : undefined;
}

/** The spellings a stored phone may have for an E.164 number, punctuation removed: `+447400123456`, `447400123456`, `07400123456`, `7400123456`. */
export function storedForms(number: string): string[] {
  const n = parsePhoneNumberFromString(number);
  if (!n) return [number];
  return [n.number, n.number.slice(1), `0${n.nationalNumber}`, n.nationalNumber];
}
