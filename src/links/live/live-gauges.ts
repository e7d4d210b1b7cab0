// The live streams' gauges on the ingress's operations port: streams open on this ingress, and
// the scans its hub keeps for resuming (their memory, about 0.5 KB each).
import { Gauge, type Registry } from 'prom-client';
import type { ScanHub } from './scan-hub.ts';

export function liveStreamGauges(hub: ScanHub) {
  return (registry: Registry): void => {
    new Gauge({
      name: 'linkmail_live_streams',
      help: 'Live scan streams (Server-Sent Events) open on this ingress.',
      registers: [registry],
      collect() {
        this.set(hub.streams);
      },
    });
    new Gauge({
      name: 'linkmail_live_scans_held',
      help: 'Scans this ingress keeps so that live streams can resume (LIVE_STREAM_RETENTION_MS, LIVE_STREAM_RING_PER_PARTITION).',
      registers: [registry],
      collect() {
        this.set(hub.held);
      },
    });
  };
}
