// The push providers' public surface for the floors above (delivery): one provider per platform
// behind the PushProvider interface, the sandbox and the stand-in for a platform with no
// credentials, and the retry rule they share. HTTP/2 pooling and FCM's token exchange stay inside.
export { ApnsProvider } from './apns.js';
export { FcmProvider } from './fcm.js';
export { ServiceAccountTokenSource, tokenUriProblem, type ServiceAccount, type TokenUriRule } from './fcm-auth.js';
export { sendWithRetries } from './retry.js';
export type { RetryOptions } from '../retry.js';
export { SandboxProvider } from './sandbox.js';
export type { PushDevice, PushMessage, PushProvider } from './types.js';
export { UnconfiguredProvider } from './unconfigured.js';
