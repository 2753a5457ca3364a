import { OAuthError } from '../../errors.js';

/** RFC 9101 §6.2 and §7 (OIDC Core §6.3): the request object is not acceptable. */
export class InvalidRequestObject extends OAuthError {
  constructor(d: string) {
    super('invalid_request_object', d);
  }
}

/** RFC 9126 §4 and RFC 9101 §7: the `request_uri` is unknown, expired, used or another client's. */
export class InvalidRequestUri extends OAuthError {
  constructor(d: string) {
    super('invalid_request_uri', d);
  }
}
