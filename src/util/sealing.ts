// Sealing secrets at rest (push provider credentials, docs/channels.md): AES-256-GCM with a
// random 12-byte nonce per seal. A sealed value is
//   version (1 byte, 0x01) · key id (4 bytes) · nonce (12 bytes) · ciphertext · tag (16 bytes)
// The key id (the first 4 bytes of SHA-256 over a label and the key) names the key that sealed
// it, so a value sealed under another key is told apart from a damaged one, and a later
// version can keep several keys and pick by id (rotation). The header and a context string
// (what the value is, e.g. its table, row and column) are authenticated as additional data:
// a value copied to another row or column does not open.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 0x01;
const KEY_ID_BYTES = 4;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES;

/** Why a sealed value did not open. */
export type UnsealReason = 'wrong_key' | 'damaged' | 'unknown_version';

export class UnsealError extends Error {
  constructor(
    readonly reason: UnsealReason,
    message: string,
  ) {
    super(message);
  }
}

export class SecretBox {
  private readonly keyId: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('an AES-256 key is 32 bytes');
    this.keyId = createHash('sha256').update('herald secrets key id\0').update(key).digest().subarray(0, KEY_ID_BYTES);
  }

  seal(plaintext: string, context: string): Buffer {
    const header = Buffer.concat([Buffer.of(VERSION), this.keyId]);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(header, context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([header, nonce, body, cipher.getAuthTag()]);
  }

  /** The plaintext; throws UnsealError when `sealed` is not a value this key sealed for `context`. */
  open(sealed: Buffer, context: string): string {
    if (sealed.length < HEADER_BYTES + NONCE_BYTES + TAG_BYTES) throw new UnsealError('damaged', 'the sealed value is truncated');
    if (sealed[0] !== VERSION) throw new UnsealError('unknown_version', `the sealed value has format version ${sealed[0]}, which this Herald does not read`);
    const header = sealed.subarray(0, HEADER_BYTES);
    if (!header.subarray(1).equals(this.keyId)) throw new UnsealError('wrong_key', 'the value was sealed with another HERALD_SECRETS_KEY');
    const nonce = sealed.subarray(HEADER_BYTES, HEADER_BYTES + NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(header, context));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES + NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnsealError('damaged', 'the sealed value failed authentication (altered, or sealed for another place)');
    }
  }
}

const aad = (header: Buffer, context: string): Buffer => Buffer.concat([header, Buffer.from(context, 'utf8')]);
