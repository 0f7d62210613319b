// A campaign email as it goes out (docs/channels.md): `Message-ID: <{message id}@{from domain}>`
// (how callbacks find the message), the RFC 8058 unsubscribe headers, the text part derived
// from the html when the node has none, the preheader as the first, hidden, text of the html.
import { compile } from 'html-to-text';
import type { SendMailOptions } from 'nodemailer';
import type { EmailChannel } from './settings.js';

export interface EmailContent {
  subject: string;
  html?: string;
  text?: string;
  preheader?: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The text part of an html-only email: links kept as `text [url]`, images dropped. Compiled
 * once: `convert` builds its converter from the options on every call, most of its cost on a
 * short email.
 */
const textOf: (html: string) => string = compile({ wordwrap: 78, selectors: [{ selector: 'img', format: 'skip' }] });

const messageIdHeader = (messageId: string, fromEmail: string): string => `<${messageId}@${fromEmail.slice(fromEmail.lastIndexOf('@') + 1)}>`;

/** The html part as sent: the preheader, if any, as its first, hidden, text; undefined without html. */
export function htmlPart(content: EmailContent): string | undefined {
  const preheader = content.preheader ? `<div style="display:none;max-height:0;overflow:hidden">${escapeHtml(content.preheader)}</div>` : '';
  return content.html === undefined ? undefined : preheader + content.html;
}

/** The text part as sent: the content's own, else derived from its html. */
export const textPart = (content: EmailContent): string => content.text ?? textOf(content.html ?? '');

export function emailMessage(channel: Pick<EmailChannel, 'from' | 'reply_to'>, to: string, messageId: string, content: EmailContent, unsubscribeUrl: string): SendMailOptions {
  const html = htmlPart(content);
  return {
    from: channel.from.name ? { name: channel.from.name, address: channel.from.email } : channel.from.email,
    to,
    ...(channel.reply_to ? { replyTo: channel.reply_to } : {}),
    subject: content.subject,
    ...(html !== undefined ? { html } : {}),
    text: textPart(content),
    messageId: messageIdHeader(messageId, channel.from.email),
    headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
