// Push provider answers classified (docs/channels.md): the pure rules in src/domain/push-outcome.ts,
// with the error bodies FCM HTTP v1 and APNs send.
import t from 'tap';
import {
  apnsData,
  classifyApns,
  classifyFcm,
  classifyTokenEndpoint,
  DEFAULT_RETRY_POLICY,
  fcmData,
  parseRetryAfter,
  retryDelayMs,
  transportOutcome,
} from '../../src/domain/push-outcome.js';

const FCM_UNREGISTERED = {
  error: {
    code: 404,
    message: 'Requested entity was not found.',
    status: 'NOT_FOUND',
    details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
  },
};
const FCM_BAD_TOKEN = {
  error: {
    code: 400,
    message: 'The registration token is not a valid FCM registration token',
    status: 'INVALID_ARGUMENT',
    details: [
      { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
      {
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: 'message.token', description: 'The registration token is not a valid FCM registration token' }],
      },
    ],
  },
};
const FCM_BAD_FIELD = {
  error: {
    code: 400,
    message: 'Invalid value at \'message.data[0].value\' (TYPE_STRING), 12',
    status: 'INVALID_ARGUMENT',
    details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.data[0].value', description: 'Invalid value' }] }],
  },
};
const FCM_UNAUTHENTICATED = {
  error: {
    code: 401,
    message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
    status: 'UNAUTHENTICATED',
  },
};
const FCM_UNAVAILABLE = {
  error: {
    code: 503,
    message: 'The service is currently unavailable.',
    status: 'UNAVAILABLE',
    details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNAVAILABLE' }],
  },
};
const FCM_QUOTA = {
  error: {
    code: 429,
    message: 'Quota exceeded for quota metric \'Send requests\'',
    status: 'RESOURCE_EXHAUSTED',
    details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'QUOTA_EXCEEDED' }],
  },
};

t.test('FCM: 200 with a message name is delivered', async (t) => {
  t.same(classifyFcm(200, { name: 'projects/p/messages/0:1500415314455276%31bd1c96' }), {
    kind: 'delivered',
    providerMessageId: 'projects/p/messages/0:1500415314455276%31bd1c96',
  });
});

t.test('FCM: UNREGISTERED is a dead token, uninstalled', async (t) => {
  t.match(classifyFcm(404, FCM_UNREGISTERED), { kind: 'dead_token', suppression: 'uninstalled', error: /UNREGISTERED/ });
});

t.test('FCM: INVALID_ARGUMENT about the token is a dead token, invalid_token; about another field it is not', async (t) => {
  t.match(classifyFcm(400, FCM_BAD_TOKEN), { kind: 'dead_token', suppression: 'invalid_token' });
  t.match(classifyFcm(400, FCM_BAD_FIELD), { kind: 'rejected', error: /INVALID_ARGUMENT/ });
});

t.test('FCM: 429, 500, 503 are retryable, with the Retry-After given', async (t) => {
  t.same(classifyFcm(503, FCM_UNAVAILABLE, 1000), { kind: 'retryable', error: 'FCM 503 UNAVAILABLE: The service is currently unavailable.', retryAfterMs: 1000 });
  t.match(classifyFcm(429, FCM_QUOTA, 60_000), { kind: 'retryable', retryAfterMs: 60_000 });
  t.match(classifyFcm(500, { error: { code: 500, status: 'INTERNAL', message: 'Internal error' } }), { kind: 'retryable' });
  t.notOk('retryAfterMs' in classifyFcm(500, undefined));
});

t.test('FCM: 401 and 403 are configuration errors', async (t) => {
  t.match(classifyFcm(401, FCM_UNAUTHENTICATED), { kind: 'config_error', error: /UNAUTHENTICATED/ });
  t.match(classifyFcm(403, { error: { code: 403, status: 'PERMISSION_DENIED', details: [{ errorCode: 'SENDER_ID_MISMATCH' }] } }), { kind: 'config_error' });
  t.match(classifyFcm(401, { error: { code: 401, status: 'UNAUTHENTICATED', details: [{ errorCode: 'THIRD_PARTY_AUTH_ERROR' }] } }), { kind: 'config_error' });
});

t.test('FCM OAuth token endpoint: a refusal is a configuration error, a 503 retryable', async (t) => {
  t.match(classifyTokenEndpoint(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }), {
    kind: 'config_error',
    error: /\(invalid_grant\): check the FCM service account$/,
  });
  t.match(classifyTokenEndpoint(503, {}, 2000), { kind: 'retryable', retryAfterMs: 2000 });
});

t.test("the token endpoint's own text is never repeated: only a documented OAuth error code", async (t) => {
  // What an internal service behind a token_uri might answer: its body must not reach the tenant.
  const internal = classifyTokenEndpoint(403, { error: 'db password is hunter2', error_description: 'root@10.0.0.5 denied', detail: 'x' });
  t.equal(internal.kind, 'config_error');
  t.equal(internal.error, 'FCM token endpoint answered 403: check the FCM service account');
  t.equal(classifyTokenEndpoint(401, 'Unauthorized: see http://10.0.0.5/').error, 'FCM token endpoint answered 401: check the FCM service account');
  for (const code of ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope']) {
    t.match(classifyTokenEndpoint(400, { error: code }).error, `(${code})`);
  }
});

t.test('transport failures: the class only; a refused destination or an oversized answer is not retried', async (t) => {
  t.same(transportOutcome('FCM token endpoint', 'unreachable'), { kind: 'retryable', error: 'FCM token endpoint unreachable' });
  t.same(transportOutcome('FCM token endpoint', 'timed_out'), { kind: 'retryable', error: 'FCM token endpoint timed out' });
  t.same(transportOutcome('FCM token endpoint', 'too_large'), { kind: 'config_error', error: 'FCM token endpoint answer too large' });
  t.same(transportOutcome('FCM token endpoint', 'refused'), { kind: 'config_error', error: 'FCM token endpoint refused: private address' });
  t.same(transportOutcome('APNs', 'timed_out'), { kind: 'retryable', error: 'APNs timed out' });
});

t.test('APNs answers', async (t) => {
  t.same(classifyApns(200, undefined, 'ABC-1'), { kind: 'delivered', providerMessageId: 'ABC-1' });
  t.match(classifyApns(410, 'Unregistered'), { kind: 'dead_token', suppression: 'uninstalled' });
  t.match(classifyApns(400, 'BadDeviceToken'), { kind: 'dead_token', suppression: 'invalid_token' });
  t.match(classifyApns(403, 'InvalidProviderToken'), { kind: 'config_error', error: /InvalidProviderToken/ });
  t.match(classifyApns(400, 'DeviceTokenNotForTopic'), { kind: 'config_error' });
  t.match(classifyApns(400, 'BadTopic'), { kind: 'config_error' });
  t.match(classifyApns(403, 'ExpiredProviderToken'), { kind: 'retryable' });
  t.match(classifyApns(429, 'TooManyRequests', undefined, 1000), { kind: 'retryable', retryAfterMs: 1000 });
  t.match(classifyApns(503, 'ServiceUnavailable'), { kind: 'retryable' });
  t.match(classifyApns(500, 'InternalServerError'), { kind: 'retryable' });
  t.same(classifyApns(400, 'apn write failed: connect ECONNREFUSED 10.0.0.5:443'), { kind: 'rejected', error: 'APNs 400' }, 'only an Apple reason code is repeated');
  t.match(classifyApns(413, 'PayloadTooLarge'), { kind: 'rejected' });
});

t.test('reserved keys are stripped from custom data', async (t) => {
  t.same(
    fcmData({ from: 'x', notification: 'x', message_type: 'x', 'google.c': 'x', 'gcm.n.e': 'x', google: 'kept', deep: { a: 1 }, n: 2, s: 's', u: undefined }),
    { google: 'kept', deep: '{"a":1}', n: '2', s: 's' },
  );
  t.same(apnsData({ aps: { alert: 'x' }, deep: { a: 1 }, n: 2 }), { deep: { a: 1 }, n: 2 });
  t.same(fcmData(undefined), {});
});

t.test('Retry-After: seconds or an HTTP date', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.equal(parseRetryAfter('1', now), 1000);
  t.equal(parseRetryAfter(['120'], now), 120_000);
  t.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
  t.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:30 GMT', now), 0);
  t.equal(parseRetryAfter('soon', now), undefined);
  t.equal(parseRetryAfter(undefined, now), undefined);
});

t.test('retry delays: Retry-After honoured and capped, else jittered exponential back-off', async (t) => {
  const p = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
  t.equal(retryDelayMs(1, 1000, p, 0.5), 1000);
  t.equal(retryDelayMs(1, 60_000, p, 0.5), 5000);
  t.equal(retryDelayMs(1, undefined, p, 0), 50);
  t.equal(retryDelayMs(1, undefined, p, 0.999), 100);
  t.equal(retryDelayMs(3, undefined, p, 0), 200);
  t.equal(retryDelayMs(3, undefined, p, 0.999), 400);
  t.equal(retryDelayMs(10, undefined, p, 0.999), 1000);
});
