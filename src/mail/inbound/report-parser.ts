// Reads the reports mailbox providers send back about delivered mail: delivery
// status notifications (RFC 3464, `multipart/report; report-type=delivery-status`)
// and feedback reports (RFC 5965, `report-type=feedback-report`). What matters
// here: which of our messages it concerns (the Message-ID we gave it, quoted in
// the report's copy of the original; null when the report quotes none of ours,
// which a signed return path may still name), which recipient, and the verdict.
// Nothing here is trusted: report-intake.ts decides what a report may change.
// mailparser is not used: it folds a report's machine-readable parts (message/delivery-status)
// into the text body. A report's parts are top-level parts of its multipart/report, each a
// header block and a body, which is all this needs to read.

export type Report =
  | { kind: 'bounce'; messageId: string | null; recipient: string | null; status: string; permanent: boolean }
  | { kind: 'delay'; messageId: string | null; recipient: string | null; status: string }
  | { kind: 'complaint'; messageId: string | null; recipient: string | null; feedbackType: string };

// Our Message-IDs are <message uuid@from domain> (smtp-handover.ts).
const OUR_MESSAGE_ID = /^Message-ID:\s*<([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@[^>\s]+>/im;

/** The value of a `Name: value` field of a report block (folded lines joined). */
const field = (text: string, name: string): string | undefined => {
  const m = new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t]+.*)*)`, 'im').exec(text);
  return m?.[1]?.replace(/\r?\n[ \t]+/g, ' ').trim();
};

/** `rfc822; someone@example.net` → someone@example.net, lower-cased. */
const address = (value: string | undefined): string | null => {
  const bare = value?.split(';').pop()?.trim().replace(/^<|>$/g, '');
  return bare && bare.includes('@') ? bare.toLowerCase() : null;
};

interface Part {
  type: string;
  text: string;
}

/** Splits a message into its header block and its body. */
function headersAndBody(raw: string): { headers: string; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  if (at < 0) return { headers: raw, body: '' };
  return { headers: raw.slice(0, at), body: raw.slice(at).replace(/^\r?\n\r?\n/, '') };
}

function decode(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** The report type of a multipart/report message and its top-level parts. */
function reportParts(raw: string): { reportType: string; parts: Part[] } | undefined {
  const { headers, body } = headersAndBody(raw);
  const contentType = field(headers, 'Content-Type') ?? '';
  if (!/^multipart\/report\b/i.test(contentType)) return undefined;
  const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  const reportType = /report-type\s*=\s*"?([A-Za-z0-9-]+)/i.exec(contentType)?.[1]?.toLowerCase() ?? '';
  if (!boundary) return undefined;
  const marker = `--${boundary[1] ?? boundary[2]}`;
  const parts = body.split(marker).slice(1).filter((chunk) => !chunk.startsWith('--')).map((chunk) => {
    const part = headersAndBody(chunk.replace(/^[ \t]*\r?\n/, ''));
    const type = (field(part.headers, 'Content-Type') ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
    return { type, text: decode(part.body, (field(part.headers, 'Content-Transfer-Encoding') ?? '').toLowerCase()) };
  });
  return { reportType, parts };
}

/** The reports in a received message (one per recipient block), or none when it is no report. */
export async function parseReport(raw: Buffer): Promise<Report[]> {
  const report = reportParts(raw.toString('utf8'));
  if (!report) return [];
  const { reportType: type, parts } = report;
  const original = parts.find((p) => p.type === 'message/rfc822' || p.type === 'text/rfc822-headers' || p.type === 'message/rfc822-headers');
  const ours = original && OUR_MESSAGE_ID.exec(original.text);
  const messageId = ours ? ours[1]!.toLowerCase() : null;

  if (type === 'delivery-status') {
    const status = parts.find((p) => p.type === 'message/delivery-status' || p.type === 'message/global-delivery-status');
    if (!status) return [];
    // Per-message fields first, then one block per recipient, separated by blank lines.
    const blocks = status.text.split(/\r?\n\s*\r?\n/).filter((b) => /^(Final|Original)-Recipient:/im.test(b));
    return blocks.flatMap((block): Report[] => {
      const action = (field(block, 'Action') ?? '').toLowerCase();
      const code = field(block, 'Status') ?? '';
      const recipient = address(field(block, 'Final-Recipient') ?? field(block, 'Original-Recipient'));
      if (action === 'failed') return [{ kind: 'bounce', messageId, recipient, status: code, permanent: code.startsWith('5') }];
      if (action === 'delayed') return [{ kind: 'delay', messageId, recipient, status: code }];
      return [];
    });
  }
  if (type === 'feedback-report') {
    const feedback = parts.find((p) => p.type === 'message/feedback-report');
    if (!feedback) return [];
    const originalTo = original && field(original.text, 'To');
    const recipient = address(field(feedback.text, 'Original-Rcpt-To') ?? field(feedback.text, 'Removal-Recipient')) ?? address(originalTo?.match(/<([^>]+)>/)?.[1] ?? originalTo);
    return [{ kind: 'complaint', messageId, recipient, feedbackType: (field(feedback.text, 'Feedback-Type') ?? 'abuse').toLowerCase() }];
  }
  return [];
}
