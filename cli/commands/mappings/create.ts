import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { parseMapping, readJsonFile, tenantFlag } from '../../federation.js';
import { fields } from '../../format.js';

export default class MappingsCreate extends BaseCommand<typeof MappingsCreate> {
  static override summary = 'Create a field-mapping set.';
  static override description =
    'Maps source attributes to user fields (email, name, given_name, family_name, preferred_username, ' +
    'external_id, locale, phone_number) or to custom claim keys. Give the mappings with repeated --map ' +
    'SOURCE=user:FIELD / SOURCE=claim:KEY, or as a JSON array in --mappings-file (entries: source, targetType, ' +
    'target, and optional required, multiValued, transform). See docs/federation.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --key edugain-idp --name "eduGAIN IdPs" --source-type saml ' +
      '--map urn:oid:0.9.2342.19200300.100.1.3=user:email --map urn:oid:2.16.840.1.113730.3.1.241=user:name ' +
      '--map urn:oid:1.3.6.1.4.1.5923.1.1.1.9=claim:affiliation',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --key hr --name "HR CSV" --source-type csv ' +
      '--mappings-file hr-mappings.json --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    key: Flags.string({ description: 'setKey: unique in the tenant (letters, digits, . _ ~ -)', required: true }),
    name: Flags.string({ description: 'display name', required: true }),
    'source-type': Flags.string({
      description: 'kind of source',
      options: ['csv', 'scim', 'saml', 'directory'],
      required: true,
    }),
    'source-profile': Flags.string({ description: 'source profile id (spr_…) the set is written for' }),
    description: Flags.string({ description: 'free text for operators' }),
    map: Flags.string({ description: 'SOURCE=user:FIELD or SOURCE=claim:KEY (repeatable)', multiple: true }),
    'mappings-file': Flags.string({ description: 'JSON file with the mappings array', exclusive: ['map'] }),
  };
  static override fieldFlags = { setKey: 'key', displayName: 'name', sourceType: 'source-type', mappings: 'map' };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const mappings = this.flags['mappings-file']
      ? readJsonFile(this.flags['mappings-file'], 'mappings-file')
      : (this.flags.map ?? []).map(parseMapping);
    const input = {
      setKey: this.flags.key,
      displayName: this.flags.name,
      sourceType: this.flags['source-type'],
      sourceProfileId: this.flags['source-profile'],
      description: this.flags.description,
      mappings,
    };
    const set = await this.services.fieldMapping.mappingSets.create(this.flags.tenant, input, this.actor);
    this.log(`Created field-mapping set ${set.id} in tenant ${set.tenantId}`);
    this.log(
      fields([
        ['id', set.id],
        ['key', set.setKey],
        ['sourceType', set.sourceType],
        ['mappings', String(set.mappings.length)],
      ]),
    );
    return set;
  }
}
