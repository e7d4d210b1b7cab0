// The link webhooks' sender is the platform's (HTTPS only, public addresses, no redirects, a deadline).
export { createWebhookSender, type SenderOptions, type WebhookSender } from '../../platform/webhooks/webhook-sender.ts';
