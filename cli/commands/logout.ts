import { HttpCommand } from '../http/base.js';
import { configPath, removeCredentials } from '../http/config.js';

export default class Logout extends HttpCommand<typeof Logout> {
  static override summary = 'Remove the credentials saved by `iam login`.';
  static override description =
    'Deletes the CLI config file ($IAM_CLI_CONFIG, or ${XDG_CONFIG_HOME:-$HOME/.config}/iam/config.json). ' +
    'Tokens already issued stay valid until they expire (they were only ever held in memory); to revoke the client ' +
    'itself, disable it or rotate its secret.';
  static override examples = ['<%= config.bin %> <%= command.id %>'];

  run() {
    const path = configPath();
    const removed = removeCredentials(path);
    this.log(removed ? `Removed ${path}` : `Not logged in (no ${path})`);
    return Promise.resolve({ config_path: path, removed });
  }
}
