// The value of a `scans` message (schemas/scan.avsc): what the redirect knew
// (ScanIdentity), plus the location and visitor data added when it is shipped.
import type { GeoLocation } from './geo.ts';
import type { Visitor } from './visitor.ts';
import type { ScanIdentity } from './raw-scan.ts';

export type ScanEvent = ScanIdentity & GeoLocation & Visitor & { userAgent: string | null };
