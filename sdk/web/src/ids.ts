// Random v4 UUIDs: the anonymous id (Herald keeps at most 36 characters of it) and every
// message's messageId. crypto.getRandomValues, unlike crypto.randomUUID, also exists on pages
// served over plain http.
export function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  let s = '';
  for (let i = 0; i < 16; i++) s += (i === 4 || i === 6 || i === 8 || i === 10 ? '-' : '') + b[i]!.toString(16).padStart(2, '0');
  return s;
}
