// An actor's SMTP pools (channels/pools.ts), made on the email channel's first use: one
// nodemailer pool per workspace (email/transport.ts), every socket through the destination guard
// on SMTP's ports.
import { OutboundPolicy } from '../../net/destinations.js';
import type { PoolKind } from '../pools.js';
import { EmailTransports, SMTP_PORTS } from './transport.js';

export const SMTP_POOLS: PoolKind<EmailTransports> = {
  name: 'smtp',
  make: (settings) => new EmailTransports(new OutboundPolicy(settings.allowedPrivateHosts, SMTP_PORTS)),
};
