import type { AppDeps } from '../../daemon/context.js';

/**
 * Dependencies that are never called: building the application only wires routes, so every
 * service is a stand-in that answers any property or call with another stand-in
 * (test/daemon/route-declarations.test.ts, test/console/authorization-sweep.test.ts).
 */
export function standIns(): AppDeps {
  const any: unknown = new Proxy(function standIn() {}, {
    get: (_t, k) => (k === 'then' ? undefined : k === Symbol.toPrimitive ? () => 'x' : any),
    apply: () => any,
    construct: () => any as object,
  });
  const config = new Proxy(
    { issuer: 'http://127.0.0.1', bodyLimitBytes: 102_400, secretKey: Buffer.alloc(32, 1), trustedProxies: [] },
    { get: (t, k) => (k in t ? t[k as keyof typeof t] : any) },
  );
  return new Proxy({ config } as unknown as AppDeps, {
    get: (t, k) => (k === 'config' ? t.config : k === 'metrics' ? undefined : any),
  });
}
