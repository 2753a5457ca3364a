import { readFileSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';

export default class ResourceMetadataSet extends BaseCommand<typeof ResourceMetadataSet> {
  static override summary = 'Have the service host a resource server’s protected resource metadata (RFC 9728).';
  static override description =
    'Stores the document served at {issuer}/resource-metadata/{client_id}, the URL an MCP server names in ' +
    'WWW-Authenticate: Bearer resource_metadata="…" (docs/mcp.md). --resource must be one of the client’s resource ' +
    'identifiers; authorization_servers defaults to this issuer, bearer_methods_supported to ["header"]. --file ' +
    'gives the whole document as JSON (flags given beside it replace its members). Replaces any stored document; ' +
    'the first store turns strict introspection on for the client. With --if-match (the etag of `show`) a ' +
    'document changed since is refused. Audited as client.resource_metadata.set. The same as ' +
    'PUT /api/admin/tenants/{tenantId}/clients/{clientId}/resource-metadata.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --resource https://mcp.example.com/mcp --scope mcp:tools --name "Example MCP"',
    {
      description: 'From a file, only if unchanged since it was read.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --file prm.json --if-match \'"3q2-…"\'',
    },
  ];
  static override args = {
    client: Args.string({ description: 'the resource server’s client_id, or its id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    file: Flags.string({ description: 'a JSON file with the whole document' }),
    resource: Flags.string({ description: 'the resource identifier the document describes' }),
    scope: Flags.string({ description: 'scopes_supported (repeatable)', multiple: true, multipleNonGreedy: true }),
    'authorization-server': Flags.string({
      description: 'authorization_servers (repeatable; default: this issuer)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    name: Flags.string({ description: 'resource_name' }),
    documentation: Flags.string({ description: 'resource_documentation (a URL)' }),
    'if-match': Flags.string({ description: 'the etag of `show`: refuse if the document changed since' }),
  };
  static override fieldFlags = {
    resource: 'resource',
    scopes_supported: 'scope',
    authorization_servers: 'authorization-server',
    resource_name: 'name',
    resource_documentation: 'documentation',
  };

  async run() {
    const f = this.flags;
    let doc: Record<string, unknown> = {};
    if (f.file) {
      try {
        doc = JSON.parse(readFileSync(f.file, 'utf8')) as Record<string, unknown>;
      } catch (e) {
        throw new CliFailure('invalid_file', `--file ${f.file}: ${(e as Error).message}`);
      }
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
        throw new CliFailure('invalid_file', `--file ${f.file}: not a JSON object`);
    }
    const input = {
      ...doc,
      ...(f.resource ? { resource: f.resource } : {}),
      ...(f.scope ? { scopes_supported: f.scope } : {}),
      ...(f['authorization-server'] ? { authorization_servers: f['authorization-server'] } : {}),
      ...(f.name ? { resource_name: f.name } : {}),
      ...(f.documentation ? { resource_documentation: f.documentation } : {}),
    };
    if (input.resource === undefined) this.error('--resource (or a --file naming it) is required', { exit: 2 });
    await this.requireTenant(f.tenant);
    this.serviceInput = input;
    const r = await this.services.resourceServers.put(f.tenant, this.args.client, input, this.actor, {
      ...(f['if-match'] ? { ifMatch: f['if-match'] } : {}),
    });
    this.log(`${r.created ? 'Stored' : 'Replaced'} the protected resource metadata of ${r.view.client_id}.`);
    this.log(`Served at: ${r.view.url}`);
    this.log(`Name it in WWW-Authenticate: Bearer resource_metadata="${r.view.url}"`);
    if (r.created) this.log(`Strict introspection: ${r.view.strict_introspection ? 'on' : 'off'}`);
    return { ...r.view, etag: r.etag, created: r.created };
  }
}
