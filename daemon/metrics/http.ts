/**
 * Request rate and latency per route (docs/metrics.md: iam_http_requests_total,
 * iam_http_request_duration_seconds). Mounted by daemon/app.ts only when metrics are on, first
 * of all, so it times everything the application does for a request and sees the status the
 * error renderer settled on.
 *
 * The `route` label is the template @koa/router matched (`/api/admin/tenants/:tenantId`), or
 * `unmatched`: never the raw path, whose ids would make a series per tenant, user or token.
 * Per request: one hrtime pair, two Map lookups (the series of a method and route is made once
 * and kept), a few additions.
 */
import type { Middleware } from 'koa';
import type { Metrics } from '../../shared/metrics.js';

export function httpMetrics(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      // Set by @koa/router on the context of a request a route served (its template).
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      metrics.httpSeries(ctx.method, route === undefined ? undefined : String(route)).observe(status, seconds);
    }
  };
}
