// Sealing secrets at rest (src/util/sealing.ts): AES-256-GCM, a fresh nonce per seal, a versioned
// header naming the key, the context bound as additional data.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { SecretBox, UnsealError } from '../../src/util/sealing.js';

const box = new SecretBox(randomBytes(32));
const SECRET = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n';

function refused(t: Test, fn: () => unknown, reason: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  t.type(err, UnsealError);
  t.equal((err as UnsealError).reason, reason, (err as Error).message);
}

t.test('a sealed value opens with its key and context, and holds no plaintext', async (t) => {
  const sealed = box.seal(SECRET, 'push_channels/w1/fcm');
  t.equal(box.open(sealed, 'push_channels/w1/fcm'), SECRET);
  t.equal(sealed[0], 1, 'format version 1');
  t.equal(sealed.length, 1 + 4 + 12 + Buffer.byteLength(SECRET) + 16, 'header, nonce, ciphertext, tag');
  t.notOk(sealed.includes(Buffer.from('PRIVATE KEY')), 'no plaintext in it');
  t.equal(box.open(box.seal('', 'c'), 'c'), '', 'the empty string too');
  t.equal(box.open(box.seal('é ✓ 𝄞', 'c'), 'c'), 'é ✓ 𝄞', 'UTF-8');
});

t.test('every seal uses a fresh nonce', async (t) => {
  const a = box.seal(SECRET, 'c');
  const b = box.seal(SECRET, 'c');
  t.not(a.toString('hex'), b.toString('hex'));
  t.not(a.subarray(5, 17).toString('hex'), b.subarray(5, 17).toString('hex'), 'different nonces');
  t.same(a.subarray(0, 5), b.subarray(0, 5), 'same header (version and key id)');
});

t.test('another key: refused as wrong_key, not as damage', async (t) => {
  const sealed = box.seal(SECRET, 'c');
  refused(t, () => new SecretBox(randomBytes(32)).open(sealed, 'c'), 'wrong_key');
});

t.test('another context (a value copied to another row or column): refused', async (t) => {
  const sealed = box.seal(SECRET, 'push_channels/w1/fcm');
  refused(t, () => box.open(sealed, 'push_channels/w2/fcm'), 'damaged');
  refused(t, () => box.open(sealed, 'push_channels/w1/apns'), 'damaged');
});

t.test('any altered byte is refused', async (t) => {
  const sealed = box.seal(SECRET, 'c');
  for (const at of [5, 16, 17, 40, sealed.length - 17, sealed.length - 1]) {
    const altered = Buffer.from(sealed);
    altered[at]! ^= 0x01;
    refused(t, () => box.open(altered, 'c'), 'damaged');
  }
  refused(t, () => box.open(sealed.subarray(0, 20), 'c'), 'damaged');
  refused(t, () => box.open(Buffer.alloc(0), 'c'), 'damaged');
  const keyIdAltered = Buffer.from(sealed);
  keyIdAltered[2]! ^= 0x01;
  refused(t, () => box.open(keyIdAltered, 'c'), 'wrong_key');
});

t.test('an unknown format version is refused as such', async (t) => {
  const sealed = box.seal(SECRET, 'c');
  sealed[0] = 2;
  refused(t, () => box.open(sealed, 'c'), 'unknown_version');
});

t.test('the key must be 32 bytes', async (t) => {
  t.throws(() => new SecretBox(randomBytes(16)));
  t.throws(() => new SecretBox(randomBytes(33)));
});
