/**
 * The refresh scan as the container builds it (shared/container.ts, for the job and for
 * `iam external-tokens`): the scan service over the HTTP bridge to the tenants' upstream
 * identity providers.
 */
import type { Database } from '../../db/index.js';
import type { OutboundPolicy } from '../../net/outbound.js';
import { HttpUpstreamBridge } from './bridge.js';
import { ExternalTokenRefreshService, type ScanOptions } from './scan.js';

export { ExternalTokenRefreshService } from './scan.js';
export { ExternalTokenRefreshSettingsService } from './config.js';

export function createExternalTokenRefresh(
  ds: Database,
  p: { secretKey: string; policy: OutboundPolicy; holder: string } & Partial<ScanOptions>,
): ExternalTokenRefreshService {
  const { secretKey, policy, ...scan } = p;
  return new ExternalTokenRefreshService(ds, new HttpUpstreamBridge(ds, { secretKey, policy }), scan);
}
