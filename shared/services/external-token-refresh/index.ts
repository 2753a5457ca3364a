/**
 * The refresh scan as the composition roots build it (daemon/main.ts for the job, cli/base.ts
 * for `iam external-tokens`): the scan service over the HTTP bridge, whose credentials and
 * sealing are the upstream identity provider services'.
 */
import type { Database } from '../../db/index.js';
import type { OutboundPolicy } from '../../net/safe-fetch.js';
import { HttpUpstreamBridge } from './bridge.js';
import { upstreamCredentials, upstreamLinkSealing } from './upstream.js';
import { ExternalTokenRefreshService, type ScanOptions } from './scan.js';

export { ExternalTokenRefreshService } from './scan.js';
export { ExternalTokenRefreshSettingsService } from './config.js';

export function createExternalTokenRefresh(
  ds: Database,
  p: { secretKey: string; policy: OutboundPolicy; holder: string } & Partial<ScanOptions>,
): ExternalTokenRefreshService {
  const { secretKey, policy, ...scan } = p;
  const bridge = new HttpUpstreamBridge({
    credentials: upstreamCredentials(ds, secretKey),
    sealing: upstreamLinkSealing(secretKey),
    policy,
  });
  return new ExternalTokenRefreshService(ds, bridge, scan);
}
