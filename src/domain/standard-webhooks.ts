// Signing as the Standard Webhooks specification has it (standardwebhooks.com), so that an
// integrator verifies Herald's calls with that project's libraries unchanged: the secret is
// `whsec_` and base64 of random bytes, and each signature is `v1,` and the base64 HMAC-SHA256,
// keyed by the secret's bytes, of `{id}.{timestamp}.{body}`. During a rotation both secrets sign,
// their signatures separated by a space.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
const SECRET_BYTES = 24;

/** A new secret, shown to its owner once. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The `webhook-signature` header: one `v1,` signature for each secret, in the order given. */
function webhookSignature(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', secretBytes(s)).update(signed).digest('base64')}`).join(' ');
}

/** The three headers of one delivery attempt (the id is the same on every retry of one event). */
export function webhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignature(secrets, id, timestampSeconds, body),
  };
}
