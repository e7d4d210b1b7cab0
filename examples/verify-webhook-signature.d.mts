export function verifyWebhook(rawBody: string | Buffer, signatureHeader: string | undefined, secret: string, toleranceSeconds?: number): boolean;
