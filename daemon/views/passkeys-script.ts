/**
 * The browser script of the passkey pages, served as GET /assets/passkeys.js (assets.ts). It
 * runs after the @simplewebauthn/browser bundle (global `SimpleWebAuthnBrowser`) and only
 * enhances: every element it uses is rendered `hidden` and shown here when the browser can
 * do WebAuthn, so a page without JavaScript keeps its email-code forms and nothing else.
 *
 * - Login page (`#passkey-login`, data-challenge/data-csrf of the authorization request's
 *   forms): "Sign in with a passkey", and conditional mediation (passkeys offered in the email
 *   field's autofill, WebAuthn Level 3 §5.1.4 `mediation: "conditional"`) where supported.
 *   On `webauthn_signal.unknown_credential` it tells the browser the credential is gone
 *   (PublicKeyCredential.signalUnknownCredential, WebAuthn Level 3 §5.1.10) and says so.
 * - Account page (`#passkey-add`, data-csrf of the session): adds a passkey; a stale sign-in
 *   (403 step_up_required) shows the re-authentication link.
 *
 * Plain ES2017 in a TS string: nothing to bundle, and the build copies nothing but .js output.
 */
export const PASSKEYS_SCRIPT = `'use strict';
(function () {
  var W = window.SimpleWebAuthnBrowser;
  function byId(id) { return document.getElementById(id); }
  function say(el, text, kind) {
    if (!el) return;
    el.textContent = text;
    el.className = kind === 'ok' ? '' : 'error';
    el.hidden = !text;
  }
  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (data) { return { status: r.status, ok: r.ok, data: data || {} }; },
        function () { return { status: r.status, ok: r.ok, data: {} }; });
    });
  }
  function aborted(e) { return !!e && (e.name === 'AbortError' || e.code === 'ERROR_CEREMONY_ABORTED'); }
  function ceremonyMessage(e, what) {
    if (e && e.name === 'NotAllowedError') return 'The ' + what + ' was cancelled or timed out. Try again.';
    if (e && e.name === 'InvalidStateError') return 'This device already holds a passkey for your account.';
    return 'The ' + what + ' did not work' + (e && e.message ? ': ' + e.message : '.');
  }

  function loginPage(root) {
    var msg = byId('passkey-message');
    var button = byId('passkey-button');
    var base = { challenge: root.getAttribute('data-challenge'), csrf: root.getAttribute('data-csrf') };
    var busy = false;
    // The page's words in its language (data-msg-*, docs/localisation.md). The server's own
    // sentence (the JSON error's message) is English: shown only on an English page.
    var english = document.documentElement.lang === 'en';
    function text(name, fallback) { return root.getAttribute('data-msg-' + name) || fallback; }
    function server(message) { return english && message ? message : ''; }
    function run(autofill) {
      var options;
      var credential;
      return postJson('/login/passkey/options', base).then(function (o) {
        if (!o.ok) {
          throw { shown: server(o.data.message) || text('unavailable', 'Passkey sign-in is not available right now.') };
        }
        options = o.data;
        return W.startAuthentication({ optionsJSON: options.options, useBrowserAutofill: autofill });
      }).then(function (c) {
        credential = c;
        busy = true;
        button.disabled = true;
        say(msg, text('signing', 'Signing in\\u2026'), 'ok');
        var body = { challenge: base.challenge, csrf: base.csrf, challenge_id: options.challenge_id, credential: c };
        return postJson('/login/passkey', body);
      }).then(function (v) {
        if (v.ok && v.data.redirect_url) {
          window.location.assign(v.data.redirect_url);
          return;
        }
        busy = false;
        button.disabled = false;
        var signal = v.data.webauthn_signal;
        if (signal && signal.unknown_credential) {
          root.setAttribute('data-result', 'unknown_credential');
          var P = window.PublicKeyCredential;
          if (P && typeof P.signalUnknownCredential === 'function') {
            P.signalUnknownCredential({ rpId: options.options.rpId, credentialId: credential.id })
              .catch(function () {});
          }
          say(msg, text('removed', 'This passkey is no longer registered for your account, so it cannot sign you in. ' +
            'Sign in with an email code, then add a new passkey on your account page.'));
          return;
        }
        root.setAttribute('data-result', v.data.error || 'error');
        say(msg, server(v.data.message) || text('refused', 'The passkey sign-in was refused.'));
      }).catch(function (e) {
        busy = false;
        button.disabled = false;
        // The autofill request runs unasked, from page load: until the user has picked a
        // passkey, its failures are not theirs to read about (the button is still there).
        if (aborted(e) || (autofill && !credential)) return;
        var cancelled = e && e.name === 'NotAllowedError';
        say(msg, e && e.shown ? e.shown : english ? ceremonyMessage(e, 'passkey sign-in') :
          text(cancelled ? 'cancelled' : 'failed', ''));
      });
    }
    if (!W || !W.browserSupportsWebAuthn()) return;
    root.hidden = false;
    button.addEventListener('click', function () {
      if (busy) return;
      say(msg, '');
      // Starting a new ceremony aborts the pending autofill one (the library's abort service).
      run(false);
    });
    W.browserSupportsWebAuthnAutofill().then(function (yes) { if (yes) run(true); }, function () {});
  }

  function accountPage(root) {
    var form = byId('passkey-add-form');
    var input = byId('passkey-name');
    var msg = byId('passkey-add-message');
    var stepUp = byId('passkey-step-up');
    var csrf = root.getAttribute('data-csrf');
    if (!W || !W.browserSupportsWebAuthn()) {
      var none = byId('passkey-unsupported');
      if (none) none.hidden = false;
      return;
    }
    root.hidden = false;
    function needStepUp() {
      form.hidden = true;
      if (stepUp) stepUp.hidden = false;
      say(msg, '');
    }
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var name = input.value.trim();
      if (!name) { say(msg, 'Enter a name for the passkey.'); input.focus(); return; }
      var button = form.querySelector('button');
      button.disabled = true;
      say(msg, '');
      var challengeId;
      postJson('/account/passkeys/options', { csrf: csrf }).then(function (o) {
        if (o.status === 403 && o.data.error === 'step_up_required') throw { stepUp: true };
        if (!o.ok) throw { shown: o.data.message || 'A passkey cannot be added right now.' };
        challengeId = o.data.challenge_id;
        return W.startRegistration({ optionsJSON: o.data.options });
      }).then(function (credential) {
        var body = { csrf: csrf, name: name, challenge_id: challengeId, credential: credential };
        return postJson('/account/passkeys', body);
      }).then(function (v) {
        if (v.status === 201) {
          window.location.assign('/account?done=passkey_added#passkeys');
          return;
        }
        if (v.status === 403 && v.data.error === 'step_up_required') throw { stepUp: true };
        throw { shown: v.data.message || 'The passkey was not added.' };
      }).catch(function (e) {
        button.disabled = false;
        if (e && e.stepUp) return needStepUp();
        if (aborted(e)) return;
        say(msg, e && e.shown ? e.shown : ceremonyMessage(e, 'passkey creation'));
      });
    });
  }

  function start() {
    var login = byId('passkey-login');
    if (login) loginPage(login);
    var add = byId('passkey-add');
    if (add) accountPage(add);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
`;
