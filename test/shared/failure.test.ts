/** The causes stored beside job step error codes: the kind of failure, no secret, one line. */
import test from 'ava';
import { DEFAULT_OUTBOUND_POLICY, OutboundError, outboundRequest } from '../../shared/net/outbound.js';
import { sanitizedCause } from '../../shared/services/failure.js';

const err = (props: { message: string } & Record<string, unknown>) => Object.assign(new Error(props.message), props);

test('network and SMTP failures are named by kind', (t) => {
  t.is(
    sanitizedCause(err({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })),
    'connection refused (ECONNREFUSED): connect ECONNREFUSED',
  );
  t.regex(sanitizedCause(err({ code: 'ETIMEDOUT', message: 'Greeting never received' })), /^timed out \(ETIMEDOUT\)/);
  t.regex(
    sanitizedCause(
      err({ code: 'ESOCKET', message: 'self-signed certificate', cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' } }),
    ),
    /cause: TLS/,
  );
  t.regex(
    sanitizedCause(err({ code: 'EAUTH', responseCode: 535, message: '5.7.8 Bad credentials' })),
    /^authentication failed \(EAUTH 535\): 5\.7\.8/,
  );
});

test("a socket error wrapped by nodemailer is named by Node's own code", (t) => {
  const e = err({
    code: 'ESOCKET',
    originalCode: 'ECONNREFUSED',
    errno: -111,
    command: 'CONN',
    message: 'connect ECONNREFUSED 127.0.0.1:2525',
  });
  t.is(sanitizedCause(e), 'connection refused (ESOCKET ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:2525');
});

test('no credentials, addresses, control characters or stack lines survive', (t) => {
  const e = err({
    code: 'EENVELOPE',
    responseCode: 550,
    message: '550 <ann@acme.example> rejected via smtp://user:pw@relay\r\nat x (y.js:1)',
  });
  const s = sanitizedCause(e);
  t.false(s.includes('ann@acme.example'));
  t.false(s.includes('pw'));
  t.false(/[\r\n]/.test(s));
  t.false(s.includes('y.js'));
  t.true(s.includes('<address>'));
  t.true(sanitizedCause(err({ message: 'x'.repeat(1000) })).length <= 300);
  t.is(sanitizedCause('plain'), 'plain');
});

test('an address the outbound rules refuse is blocked_address alone: neither what the host resolved to nor the host', async (t) => {
  const err = await outboundRequest('https://localhost:9/x', {}, DEFAULT_OUTBOUND_POLICY).catch((e: unknown) => e);
  t.true(err instanceof OutboundError);
  t.regex((err as Error).message, /127\.0\.0\.1|::1/, 'the error itself says what localhost resolved to');
  t.is(sanitizedCause(err), 'blocked_address');
  t.is(sanitizedCause(new OutboundError('blocked_address', 'connected peer 10.0.0.5 is private')), 'blocked_address');
  t.is(sanitizedCause(new OutboundError('status', 'answered HTTP 503')), 'answered HTTP 503');
});
