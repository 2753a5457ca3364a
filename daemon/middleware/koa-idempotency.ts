/**
 * Idempotency-Key for routes that opt in (place it after the bearer middleware); the rules are
 * IdempotencyService's (shared/services/idempotency.ts). The first request with a key claims it
 * and finds an IdempotencyHandle on `ctx.state.idempotency`: a handler that changes something
 * passes it to its service, which records the answer in the same transaction as the change. So
 * a daemon that dies between that commit and the response leaves a `done` row, and a retry
 * with the key replays the committed answer instead of acting twice. What the handler did not
 * record (a refusal decided before any write) is recorded here after it, as is the answer of
 * a handler that takes no handle. A 5xx first attempt, or a crash before any commit, leaves no
 * answer: the row is dropped (or, after a crash, taken over once abandoned) and a retry runs.
 * A replay gets the stored response (JSON objects gain `idempotent_replay: true`, and the header
 * `Idempotent-Replayed: true`). Keys are kept 24 h; `idempotency-purge` deletes them afterwards.
 * No header, no idempotency. See docs/tenant-lifecycle.md.
 */
import type { Middleware } from 'koa';
import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { errorResponse, idempotencyRequestHash, IdempotencyService } from '../../shared/services/idempotency.js';
import type { AppState } from '../context.js';
import type { HeaderParameter } from '../openapi.js';

export {
  IDEMPOTENCY_ABANDONED_MS,
  IDEMPOTENCY_RETENTION_MS,
  idempotencyRequestHash,
} from '../../shared/services/idempotency.js';

const KEY = /^[\x20-\x7E]{1,255}$/;

/**
 * The `Idempotency-Key` header as a route declares it (RouteSpec.headers): the middleware
 * below and its OpenAPI parameter come from this one value, so a route that accepts the
 * header always lists it in /openapi.json (interface specification, "Endpoints": accepted by
 * source profile create, notification state resolve, tenant suspend, tenant-recovery
 * reactivate and trust source update; here also resume and provisioning retry).
 */
export function idempotencyHeader(service: IdempotencyService, opts: IdempotencyOptions = {}): HeaderParameter {
  return {
    name: 'Idempotency-Key',
    description:
      'Optional replay protection: a retry with the same key and body gets the stored answer ' +
      '(`idempotent_replay: true`); the same key with another body is 422 idempotency_key_mismatch. Kept 24 h.',
    required: false,
    schema: z.string().min(1).max(255).regex(KEY),
    middleware: idempotency(service, opts),
  };
}

export interface IdempotencyOptions {
  /** Shapes a replayed JSON object body (after `idempotent_replay` is added), e.g. to mark a nested result. */
  replayed?: (body: unknown) => unknown;
}

export function idempotency(service: IdempotencyService, opts: IdempotencyOptions = {}): Middleware<AppState> {
  return async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!ctx.headers['idempotency-key']) {
      await next();
      return;
    }
    if (!KEY.test(key))
      throw new ApiError(
        400,
        'invalid_request',
        'header.Idempotency-Key: must be 1 to 255 printable ASCII characters.',
      );
    const route = `${ctx.method} ${ctx.path}`.slice(0, 255);
    const begun = await service.begin({
      principal: String(ctx.state.auth?.client_id ?? 'anonymous'),
      tenantId: ctx.state.auth?.tenant_id ? String(ctx.state.auth.tenant_id) : null,
      route,
      key,
      requestHash: idempotencyRequestHash(route, (ctx.request as { body?: unknown }).body),
    });
    if (begun.replay) {
      const body = begun.body;
      ctx.status = begun.status;
      ctx.set('Idempotent-Replayed', 'true');
      const marked =
        body && typeof body === 'object' && !Array.isArray(body)
          ? { ...(body as Record<string, unknown>), idempotent_replay: true }
          : body;
      ctx.body = opts.replayed ? opts.replayed(marked) : marked;
      return;
    }
    const { claim } = begun;
    ctx.state.idempotency = claim;
    try {
      await next();
    } catch (err) {
      const known = errorResponse(err);
      if (known) await claim.finish(known.status, known.body).catch(() => claim.release());
      else await claim.release();
      throw err;
    } finally {
      ctx.state.idempotency = undefined;
    }
    if (ctx.status >= 500) await claim.release();
    else await claim.finish(ctx.status, ctx.body);
  };
}
