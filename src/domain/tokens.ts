// How a device token is shown (DECISIONS §10): never raw. 12 characters or more: the first 4
// and the last 4 around `***`; shorter: `***`.
export function maskToken(token: string): string {
  return token.length >= 12 ? `${token.slice(0, 4)}***${token.slice(-4)}` : '***';
}
