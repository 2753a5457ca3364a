/**
 * The clients the benches introspect and issue tokens with: a resource server (audience
 * https://api.bench.test, the caller of /introspect) and a client_credentials app whose tokens
 * are for it.
 */
import type { DirectoryService } from '../../shared/services/directory.js';
import type { Actor } from '../../shared/services/audit.js';

export interface Credentials {
  id: string;
  secret: string;
}

export interface ApiClients {
  resourceServer: Credentials;
  app: Credentials;
}

export async function createApiClients(
  directory: DirectoryService,
  tenantId: string,
  actor: Actor,
): Promise<ApiClients> {
  const make = async (input: Record<string, unknown>): Promise<Credentials> => {
    const c = await directory.createClient(
      tenantId,
      { grant_types: ['client_credentials'], scopes: ['api'], ...input },
      actor,
    );
    return { id: c.client.client_id, secret: c.client_secret! };
  };
  return {
    resourceServer: await make({ name: 'Bench API', resource_identifiers: ['https://api.bench.test'] }),
    app: await make({ name: 'Bench app', audiences: ['https://api.bench.test'] }),
  };
}

/** RFC 7617 Basic credentials for a client (client_secret_basic). */
export const basicAuth = (c: Credentials): string => 'Basic ' + Buffer.from(`${c.id}:${c.secret}`).toString('base64');
