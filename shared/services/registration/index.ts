/**
 * Dynamic client registration (RFC 7591, RFC 7592; docs/registration.md): the services the
 * container builds as one bundle (shared/container.ts, `registration`).
 */
import type { Database } from '../../db/index.js';
import type { ClientLifecycleService } from '../client-lifecycle.js';
import type { DirectoryService } from '../directory.js';
import { UnusedClientExpiry } from './expiry.js';
import { RegistrationPolicyService } from './policy.js';
import { RegistrationService } from './register.js';
import { InitialAccessTokenService } from './tokens.js';

export { RegistrationService, InvalidToken, bearerOf } from './register.js';
export { RegistrationPolicyService, registrationPolicyOf } from './policy.js';
export { InitialAccessTokenService } from './tokens.js';
export { UnusedClientExpiry } from './expiry.js';

export interface RegistrationServices {
  endpoint: RegistrationService;
  policy: RegistrationPolicyService;
  tokens: InitialAccessTokenService;
  expiry: UnusedClientExpiry;
}

export function registrationServices(
  ds: Database,
  deps: { directory: DirectoryService; clientLifecycle: () => ClientLifecycleService },
): RegistrationServices {
  const tokens = new InitialAccessTokenService(ds);
  return {
    endpoint: new RegistrationService(ds, { ...deps, tokens }),
    policy: new RegistrationPolicyService(ds),
    tokens,
    expiry: new UnusedClientExpiry(ds, deps.clientLifecycle),
  };
}
