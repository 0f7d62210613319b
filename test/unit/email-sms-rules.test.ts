// Pure rules of the email and SMS channels (docs/channels.md): unsubscribe tokens, phone
// normalisation, the simulator addresses and numbers, the unsubscribe_url warning.
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { readUnsubscribeToken, unsubscribeKey, unsubscribeToken } from '../../src/channels/email/unsubscribe.js';
import { e164, storedForms } from '../../src/channels/sms/phone.js';
import { sandboxEmailEvent } from '../../src/channels/email/sandbox.js';
import { sandboxTwilio } from '../../src/channels/sms/sandbox.js';
import { workflowWarnings } from '../../src/domain/campaigns.js';

t.test('unsubscribe tokens: read back, never forged, moved or made under another key', async (t) => {
  const key = unsubscribeKey(randomBytes(32));
  const subject = { workspaceId: randomUUID(), personId: randomUUID(), messageId: randomUUID() };
  const token = unsubscribeToken(key, subject);
  t.match(token, /^[A-Za-z0-9_-]{86}$/);
  t.same(readUnsubscribeToken(key, token), subject);
  t.equal(readUnsubscribeToken(unsubscribeKey(randomBytes(32)), token), undefined, 'another key');
  // Another person's id in the same token: the MAC no longer matches.
  const raw = Buffer.from(token, 'base64url');
  raw[20] = raw[20]! ^ 1;
  t.equal(readUnsubscribeToken(key, raw.toString('base64url')), undefined, 'moved to another person');
  t.equal(readUnsubscribeToken(key, token.slice(1)), undefined, 'truncated');
  t.equal(readUnsubscribeToken(key, '../../etc'), undefined);
});

t.test('phones: E.164 with the default country; invalid ones are none', async (t) => {
  t.equal(e164('07400 123456', 'GB'), '+447400123456');
  t.equal(e164('+1 (501) 712-2661'), '+15017122661');
  t.equal(e164('07400 123456'), undefined, 'national without a country');
  t.equal(e164('12'), undefined);
  t.equal(e164(null), undefined);
  t.same(storedForms('+447400123456'), ['+447400123456', '447400123456', '07400123456', '7400123456']);
});

t.test('the sandbox answers for the simulator addresses and numbers as the providers would', async (t) => {
  t.equal(sandboxEmailEvent('Bounce@simulator.herald.test'), 'hard_bounce');
  t.equal(sandboxEmailEvent('complaint@simulator.herald.test'), 'complaint');
  t.equal(sandboxEmailEvent('x@example.com'), 'delivered');
  const id = randomUUID();
  t.match(sandboxTwilio('+15005550001', id), { status: 'failed', code: 21211, error: /21211/, retryable: false, suppress: 'invalid_address' });
  t.match(sandboxTwilio('+15005550009', id), { status: 'failed', code: 21614, suppress: 'invalid_address' });
  t.same(sandboxTwilio('+15017122661', id), { status: 'sent', sid: `SM${id.replace(/-/g, '')}` });
});

t.test('an email node whose html has no unsubscribe_url warns; text-only and linked ones do not', async (t) => {
  const warn = (html?: string) => workflowWarnings({ nodes: [{ id: 'm', type: 'email', subject: 's', ...(html === undefined ? { text: 't' } : { html }) }] });
  t.equal(warn('<p>hi</p>').length, 1);
  t.same(warn('<a href="{{ unsubscribe_url }}">u</a>'), []);
  t.same(warn('<a href="{{-unsubscribe_url}}">u</a>'), []);
  t.same(warn(undefined), []);
});
