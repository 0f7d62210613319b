// The signing rule, checked with the standardwebhooks package as an integrator's receiver would.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, webhookHeaders } from '../../src/domain/standard-webhooks.js';

t.test('a signed body verifies with the standardwebhooks library', async (t) => {
  const secret = newWebhookSecret();
  t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} });
  const headers = webhookHeaders([secret], 'msg_1', Math.floor(Date.now() / 1000), body);
  t.same(new Webhook(secret).verify(body, headers), JSON.parse(body));
  t.throws(() => new Webhook(newWebhookSecret()).verify(body, headers), 'another secret does not verify');
  t.throws(() => new Webhook(secret).verify(body + ' ', headers), 'an altered body does not verify');
});

t.test('during a rotation both secrets sign', async (t) => {
  const [old, fresh] = [newWebhookSecret(), newWebhookSecret()];
  const body = '{"type":"message.sent"}';
  const headers = webhookHeaders([fresh, old], 'msg_2', Math.floor(Date.now() / 1000), body);
  t.equal(headers['webhook-signature']?.split(' ').length, 2);
  t.ok(new Webhook(old).verify(body, headers));
  t.ok(new Webhook(fresh).verify(body, headers));
});
