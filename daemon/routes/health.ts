import Router from '@koa/router';
import { z } from 'zod';
import { databaseReadiness } from '../../shared/db/data-source.js';
import type { AppDeps, AppState } from '../context.js';
import type { ApiRegistry } from '../openapi.js';

/** Liveness and readiness, for systemd, load balancers and the fresh-clone check. */
export function healthRoutes(deps: AppDeps, api: ApiRegistry, isDraining: () => boolean): Router<AppState> {
  const router = new Router<AppState>();
  const Status = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });

  api.add(
    router,
    {
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      summary: 'Liveness: the process is serving requests',
      tags: ['health'],
      security: 'none',
      responses: { 200: { description: 'alive', schema: Status } },
    },
    (ctx) => {
      ctx.body = { status: 'ok' };
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness: the database answers and migrations are current',
      tags: ['health'],
      security: 'none',
      responses: { 200: { description: 'ready', schema: Status }, 503: { description: 'not ready', schema: Status } },
    },
    async (ctx) => {
      const checks: Record<string, string> = {};
      try {
        const { migrationsCurrent } = await databaseReadiness(deps.ds);
        checks.database = 'ok';
        checks.migrations = migrationsCurrent ? 'ok' : 'pending';
      } catch (e) {
        ctx.state.log.warn({ err: e }, 'readiness check failed');
        checks.database = 'unreachable';
      }
      if (isDraining()) checks.shutdown = 'draining';
      const ready = Object.values(checks).every((v) => v === 'ok');
      ctx.status = ready ? 200 : 503;
      ctx.body = { status: ready ? 'ready' : 'not_ready', checks };
    },
  );
  return router;
}
