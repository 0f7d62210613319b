// What counts as an email address: the same rule as the request schemas' `format: email`
// (ajv-formats' full format), so an address a route accepts is one a suppression accepts.
import { fullFormats } from 'ajv-formats/dist/formats.js';

const EMAIL = fullFormats.email as RegExp;

/** Whether `s` is an email address of at most 254 characters (RFC 5321's path limit). */
export const isEmailAddress = (s: string): boolean => s.length <= 254 && EMAIL.test(s);
