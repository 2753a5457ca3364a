/** What the `iam recovery` commands share: the service on the CLI's database, and the printout. */
import { basename } from 'node:path';
import type { Config } from '../shared/config.js';
import type { RecoveryDetails, RecoveryView } from '../shared/services/recovery/index.js';
import { describeDatabase } from './base.js';
import { fields, time } from './format.js';

/** The database this process is bound to, as the recovery target records it (never a password). */
export function bindingOf(settings: Config, releaseId: string) {
  const db = settings.database;
  return {
    bindingRef: describeDatabase(db),
    providerDatabaseId: db.kind === 'sqlite' ? basename(db.path) : db.database,
    releaseId,
  };
}

const yes = (b: boolean) => (b ? 'yes' : 'no');

/** The operation as aligned lines, with what the operator can do next. */
export function describeRecovery(r: RecoveryView, d?: RecoveryDetails): string {
  const l = r.lookupReprojection;
  const next = [
    r.state === 'awaiting_restore'
      ? `${r.canConfirmRestore ? '' : `restore the tenant's data; from ${time(r.drainNotBefore)}: `}` +
        `iam recovery confirm-restore --operation ${r.operationId} --restore-reference <backup id>`
      : '',
    r.canVerify ? `iam recovery verify --operation ${r.operationId}` : '',
    r.canReactivate
      ? `iam recovery reactivate (POST .../tenant-recovery/${r.operationId}/reactivate ` +
        `with confirmation REACTIVATE_RECOVERED_TENANT:${r.tenantId})`
      : '',
    r.canCancel ? `iam recovery cancel --operation ${r.operationId}` : '',
  ].filter(Boolean);
  const pairs: [string, string][] = [
    ['operation', r.operationId],
    ['tenant', r.tenantId],
    ['environment', r.environmentId],
    ['state', r.state],
    ...(d
      ? [
          ['reason', d.reason] as [string, string],
          ['previous tenant state', d.previousLifecycleState] as [string, string],
        ]
      : []),
    ['pinned route generation', String(r.pinnedRouteGeneration)],
    ['deny runtime generation', r.denyRuntimeGeneration === null ? '-' : String(r.denyRuntimeGeneration)],
    ['deny observed', time(r.denyObservedAt)],
    ['drain not before', time(r.drainNotBefore)],
    [
      'restore',
      r.restoreReferenceRecorded
        ? `confirmed ${time(r.restoredAt)}${d?.restoreReference ? ` (${d.restoreReference})` : ''}`
        : 'not confirmed',
    ],
    ['migrations verified', time(r.migrationVerifiedAt)],
    [
      'lookup reprojection',
      `${l.stage}: ${l.projectedRows} projected, ${l.verifiedRows} verified, ` +
        `digest pinned ${yes(l.registryDigestPinned)}${l.leaseActive ? ', verify running' : ''}`,
    ],
    ['lookup reprojected', time(r.lookupReprojectedAt)],
    ['binding smoke verified', time(r.bindingSmokeVerifiedAt)],
    ...(d ? [['stabilization until', time(d.stabilizationNotBefore)] as [string, string]] : []),
    [
      'reactivated',
      r.reactivatedAt === null
        ? '-'
        : `${time(r.reactivatedAt)} (runtime generation ${r.reactivatedRuntimeGeneration})`,
    ],
    [
      'last error',
      r.lastErrorCode ? (r.lastErrorCause ? `${r.lastErrorCode}: ${r.lastErrorCause}` : r.lastErrorCode) : '-',
    ],
    ['created', time(r.createdAt)],
    ['updated', time(r.updatedAt)],
  ];
  const t = r.targets.map(
    (x, i) =>
      `  target ${i}: ${x.shardId} (${x.dataRole}, ${x.residencyPartition}) ${x.bindingRef}, ` +
      `release ${x.releaseId}, manifest ${x.manifestDigest.slice(0, 19)}…, shard generation ${x.shardGeneration}`,
  );
  return [
    fields(pairs),
    ...t,
    next.length ? `Next:\n${next.map((n) => `  ${n}`).join('\n')}` : 'Next: nothing; the operation is closed.',
  ].join('\n');
}
