// The value of a links.changelog message (schemas/link-state.avsc).
import type { LinkRow } from '../short-links/link-store.ts';

export interface LinkState {
  id: string;
  workspaceId: string;
  shortId: string;
  destination: string;
  iosUrl: string | null;
  androidUrl: string | null;
  tags: string[];
  pixels: { provider: string; pixelId: string }[];
  isActive: boolean;
  expiresAt: number | null;
  scanLimit: number | null;
  exhaustedAt: number | null;
  campaignId: string | null;
  version: number;
  updatedAt: number;
}

export const toLinkState = (row: LinkRow): LinkState => ({
  id: row.id,
  workspaceId: row.workspace_id,
  shortId: row.short_id,
  destination: row.destination,
  iosUrl: row.ios_url,
  androidUrl: row.android_url,
  tags: row.tags,
  pixels: row.pixels,
  isActive: row.is_active,
  expiresAt: row.expires_at?.getTime() ?? null,
  scanLimit: row.scan_limit,
  exhaustedAt: row.exhausted_at?.getTime() ?? null,
  campaignId: row.campaign_id,
  version: Number(row.version),
  updatedAt: row.updated_at.getTime(),
});
