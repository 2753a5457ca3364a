/**
 * The four WebAuthn ceremonies of @simplewebauthn/server, loaded on first use. The library pulls
 * in an ASN.1/X.509 stack whose import costs about half a second of CPU, which every daemon and
 * `iam` command start paid although only the passkey routes call it (docs/architecture.md,
 * "Start-up and CI").
 */
import type * as Server from '@simplewebauthn/server';

let loaded: Promise<typeof Server> | undefined;
const lib = (): Promise<typeof Server> => (loaded ??= import('@simplewebauthn/server'));

export const generateRegistrationOptions: typeof Server.generateRegistrationOptions = async (o) =>
  (await lib()).generateRegistrationOptions(o);
export const verifyRegistrationResponse: typeof Server.verifyRegistrationResponse = async (o) =>
  (await lib()).verifyRegistrationResponse(o);
export const generateAuthenticationOptions: typeof Server.generateAuthenticationOptions = async (o) =>
  (await lib()).generateAuthenticationOptions(o);
export const verifyAuthenticationResponse: typeof Server.verifyAuthenticationResponse = async (o) =>
  (await lib()).verifyAuthenticationResponse(o);
