// A campaign email as it goes out (DECISIONS §13): `Message-ID: <{message id}@{from domain}>`
// (how callbacks find the message), the RFC 8058 unsubscribe headers, the text part derived
// from the html when the node has none, the preheader as the first, hidden, text of the html.
import { convert } from 'html-to-text';
import type { SendMailOptions } from 'nodemailer';
import type { EmailChannel } from '../store/message-channels.js';

export interface EmailContent {
  subject: string;
  html?: string;
  text?: string;
  preheader?: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The text part of an html-only email: links kept as `text [url]`, images dropped. */
export const textOf = (html: string): string => convert(html, { wordwrap: 78, selectors: [{ selector: 'img', format: 'skip' }] });

const messageIdHeader = (messageId: string, fromEmail: string): string => `<${messageId}@${fromEmail.slice(fromEmail.lastIndexOf('@') + 1)}>`;

export function emailMessage(channel: Pick<EmailChannel, 'from' | 'reply_to'>, to: string, messageId: string, content: EmailContent, unsubscribeUrl: string): SendMailOptions {
  const preheader = content.preheader ? `<div style="display:none;max-height:0;overflow:hidden">${escapeHtml(content.preheader)}</div>` : '';
  const html = content.html === undefined ? undefined : preheader + content.html;
  return {
    from: channel.from.name ? { name: channel.from.name, address: channel.from.email } : channel.from.email,
    to,
    ...(channel.reply_to ? { replyTo: channel.reply_to } : {}),
    subject: content.subject,
    ...(html !== undefined ? { html } : {}),
    text: content.text ?? textOf(content.html ?? ''),
    messageId: messageIdHeader(messageId, channel.from.email),
    headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
