/**
 * Seeds a user's authentication history in bulk, through the repository (one transaction),
 * for tests and benches that need many rows without signing in that many times.
 */
import { TenantScope, type AuthHistoryRow } from '../../shared/repositories/index.js';
import { openServices } from './seed.js';

export async function seedAuthHistory(
  databaseUrl: string,
  dataDir: string,
  p: { tenantId: string; count: number; row: (i: number) => AuthHistoryRow },
): Promise<void> {
  const { ds } = await openServices(databaseUrl, dataDir);
  try {
    await ds.transaction(async (tx) => {
      const history = new TenantScope(tx, p.tenantId).authHistory;
      for (let i = 0; i < p.count; i++) await history.append(p.row(i));
    });
  } finally {
    await ds.destroy();
  }
}
