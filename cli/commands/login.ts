import { Flags } from '@oclif/core';
import { CliFailure } from '../base.js';
import { AdminClient, ServiceError } from '../http/client.js';
import { HttpCommand, usage } from '../http/base.js';
import { configPath, writeCredentials } from '../http/config.js';
import { readHidden, readLine } from '../http/prompt.js';

export default class Login extends HttpCommand<typeof Login> {
  static override summary = "Save the daemon URL and an admin client's credentials for the operator commands.";
  static override description =
    'Checks the credentials by obtaining a token (client_credentials grant at POST /token) and reports the scopes ' +
    'granted and the ' +
    "client's tenant; only then writes them to the CLI config file: $IAM_CLI_CONFIG if set, else " +
    '${XDG_CONFIG_HOME:-$HOME/.config}/iam/config.json, created with mode 0600 in a 0700 directory. ' +
    'The secret is read from one line of stdin with --client-secret-stdin, else from IAM_CLIENT_SECRET, else from ' +
    'a prompt that does not echo. ' +
    'The operator commands (tenants suspend/resume, audit list, provisioning retry, recovery reactivate) use this ' +
    'file; see docs/cli.md.';
  static override examples = [
    {
      description: 'Log in as a platform-admin client (prompts for the secret).',
      command: '<%= config.bin %> <%= command.id %> --url https://iam.example.com --client-id cl_0123abcd',
    },
    {
      description: 'Non-interactive: the secret from a secrets manager on stdin.',
      command:
        'vault kv get -field=secret ops/iam | <%= config.bin %> <%= command.id %> --url https://iam.example.com --client-id cl_0123abcd --client-secret-stdin',
    },
  ];
  static override flags = {
    url: Flags.string({ description: 'base URL of the daemon, e.g. https://iam.example.com', required: true }),
    'client-id': Flags.string({
      description: 'client_id of an admin client with the client_credentials grant (scope iam.platform or iam.admin)',
      required: true,
    }),
    'client-secret-stdin': Flags.boolean({
      description: 'read the client secret from the first line of stdin',
      default: false,
    }),
  };

  async run() {
    let url: URL;
    try {
      url = new URL(this.flags.url);
    } catch {
      throw usage('invalid_url', `--url: "${this.flags.url}" is not an absolute URL (e.g. https://iam.example.com)`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw usage('invalid_url', '--url: must be an http or https URL');
    if (url.username || url.password || url.search || url.hash)
      throw usage('invalid_url', '--url: give the base URL only, without credentials, query or fragment');
    // Client credentials over plain HTTP are readable on the wire; allow it only on loopback.
    if (url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
      throw usage('invalid_url', '--url: use https (plain http is accepted only for a loopback address)');
    }
    const secret = await this.secret();
    const creds = {
      url: url.toString().replace(/\/+$/, ''),
      client_id: this.flags['client-id'],
      client_secret: secret,
    };
    let info;
    try {
      info = await new AdminClient(creds, this.flags.timeout * 1000).token();
    } catch (e) {
      if (e instanceof ServiceError && e.code === 'invalid_client') {
        throw new CliFailure(
          'invalid_client',
          `${creds.url} refused client "${creds.client_id}": wrong client id or secret, or the client is disabled ` +
            `or its tenant suspended; nothing was saved`,
        );
      }
      throw e;
    }
    const path = configPath();
    writeCredentials(path, creds);
    this.log(`Logged in to ${creds.url} as client ${info.client_id}`);
    this.log(`  tenant: ${info.tenant_id ?? '-'}`);
    this.log(`  scopes: ${info.scope.join(' ') || '-'}`);
    this.log(`  saved:  ${path} (mode 0600)`);
    return {
      url: creds.url,
      client_id: info.client_id,
      tenant_id: info.tenant_id,
      scopes: info.scope,
      config_path: path,
    };
  }

  private async secret(): Promise<string> {
    let secret: string | undefined;
    if (this.flags['client-secret-stdin']) {
      secret = await readLine();
      if (!secret) throw usage('missing_secret', '--client-secret-stdin: stdin had no line with the secret');
    } else if (process.env.IAM_CLIENT_SECRET) {
      secret = process.env.IAM_CLIENT_SECRET;
    } else if (process.stdin.isTTY && !this.jsonEnabled()) {
      secret = await readHidden(`Client secret for ${this.flags['client-id']}: `);
      if (!secret) throw new CliFailure('aborted', 'no secret entered: nothing was saved');
    } else {
      throw usage(
        'missing_secret',
        'no client secret: pass --client-secret-stdin (one line on stdin), set IAM_CLIENT_SECRET, or run at a ' +
          'terminal to be prompted',
      );
    }
    return secret.trim();
  }
}
