// The value of a links.changelog message (schemas/link-state.avsc).
import type { LinkRow } from '../short-links/link-store.ts';

export interface LinkState {
  id: string;
  workspaceId: string;
  shortId: string;
  /** The branded domain's id and name; null (or absent, in messages from before domains) for the base domain. */
  domainId?: string | null;
  domain?: string | null;
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
  /** Preview card shown to link-preview crawlers; null (or absent, in states made before cards) when not set. */
  title?: string | null;
  description?: string | null;
  image?: string | null;
  /** Visitors must enter a password first (the hash stays in Postgres); absent means none. */
  passwordProtected?: boolean;
  version: number;
  updatedAt: number;
  forwardQuery: boolean;
  clickId: boolean;
  expiredUrl: string | null;
  validFrom: number | null;
  geo: Record<string, string>;
  testVariants: { url: string; percent: number }[];
  /** UTM parameters the redirect appends (short-links/utm.ts); empty (or absent, in states made before UTM) for none. */
  utm?: Record<string, string>;
}

/**
 * What names a link on the redirect path and in the changelog's key: its short ID on the base
 * domain (as before domains), `<domain id>/<short ID>` on a branded one.
 */
export const linkKey = (domainId: string | null | undefined, shortId: string): string => (domainId ? `${domainId}/${shortId}` : shortId);

export const toLinkState = (row: LinkRow): LinkState => ({
  id: row.id,
  workspaceId: row.workspace_id,
  shortId: row.short_id,
  domainId: row.domain_id,
  domain: row.domain,
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
  title: row.title,
  description: row.description,
  image: row.image,
  passwordProtected: row.password_hash !== null,
  version: Number(row.version),
  updatedAt: row.updated_at.getTime(),
  forwardQuery: row.forward_query,
  clickId: row.click_id,
  expiredUrl: row.expired_url,
  validFrom: row.valid_from?.getTime() ?? null,
  geo: row.geo ?? {},
  testVariants: row.test_variants ?? [],
  utm: row.utm ?? {},
});
