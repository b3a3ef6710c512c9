"use strict";
/* global atob, btoa, fetch, URLSearchParams */
// Passkeys (issue #38 §4): runs the browser's WebAuthn ceremony for a form marked
// data-passkey-ceremony ("create" on Settings → Security, "get" on the sign-in page). The form's
// data-options URL answers the server's options (a fresh single-use challenge); the credential the
// browser returns is put in the form's hidden "credential" field, base64url-encoded as
// @simplewebauthn/server reads it, and the form is submitted as usual: the server verifies it and
// answers a page. A form marked data-passkey-optional also submits without a passkey: the ceremony
// runs only for its button marked data-passkey (hidden until WebAuthn is found). Served from
// /assets under the strict CSP (no inline script).
(function () {
  function toBytes(text) {
    var b64 = text.replace(/-/g, '+').replace(/_/g, '/');
    while (b64.length % 4) b64 += '=';
    var raw = atob(b64);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes.buffer;
  }

  function toText(buffer) {
    var bytes = new Uint8Array(buffer);
    var raw = '';
    for (var i = 0; i < bytes.length; i++) raw += String.fromCharCode(bytes[i]);
    return btoa(raw).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function withIds(list) {
    return (list || []).map(function (c) {
      return { id: toBytes(c.id), type: 'public-key', transports: c.transports };
    });
  }

  function creationOptions(o) {
    return {
      rp: o.rp,
      user: { id: toBytes(o.user.id), name: o.user.name, displayName: o.user.displayName },
      challenge: toBytes(o.challenge),
      pubKeyCredParams: o.pubKeyCredParams,
      timeout: o.timeout,
      excludeCredentials: withIds(o.excludeCredentials),
      authenticatorSelection: o.authenticatorSelection,
      attestation: o.attestation,
      extensions: o.extensions,
    };
  }

  function requestOptions(o) {
    return {
      challenge: toBytes(o.challenge),
      timeout: o.timeout,
      rpId: o.rpId,
      allowCredentials: withIds(o.allowCredentials),
      userVerification: o.userVerification,
      extensions: o.extensions,
    };
  }

  function registration(credential) {
    var r = credential.response;
    return {
      id: credential.id,
      rawId: toText(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toText(r.clientDataJSON),
        attestationObject: toText(r.attestationObject),
        transports: typeof r.getTransports === 'function' ? r.getTransports() : [],
      },
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    };
  }

  function assertion(credential) {
    var r = credential.response;
    return {
      id: credential.id,
      rawId: toText(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toText(r.clientDataJSON),
        authenticatorData: toText(r.authenticatorData),
        signature: toText(r.signature),
        userHandle: r.userHandle ? toText(r.userHandle) : undefined,
      },
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    };
  }

  function showError(form, message) {
    var box = form.querySelector('[data-passkey-error]');
    if (!box) return;
    box.textContent = message;
    box.hidden = false;
  }

  function run(form) {
    var kind = form.getAttribute('data-passkey-ceremony');
    var body = new URLSearchParams();
    body.set('_csrf', form.elements.namedItem('_csrf').value);
    return fetch(form.getAttribute('data-options'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    })
      .then(function (response) {
        if (!response.ok) throw new Error('options');
        return response.json();
      })
      .then(function (options) {
        return kind === 'create'
          ? navigator.credentials.create({ publicKey: creationOptions(options) }).then(registration)
          : navigator.credentials.get({ publicKey: requestOptions(options) }).then(assertion);
      })
      .then(function (result) {
        form.elements.namedItem('credential').value = JSON.stringify(result);
        form.submit();
      });
  }

  var supported = typeof window.PublicKeyCredential === 'function' && navigator.credentials;
  var forms = document.querySelectorAll('form[data-passkey-ceremony]');
  for (var i = 0; i < forms.length; i++) {
    var form = forms[i];
    // Without WebAuthn the sign-in button stays hidden; the add form says why it cannot work.
    if (form.hidden && supported) form.hidden = false;
    var buttons = form.querySelectorAll('[data-passkey]');
    for (var j = 0; j < buttons.length; j++) if (supported) buttons[j].hidden = false;
    form.addEventListener('submit', function (event) {
      var current = event.currentTarget;
      var submitter = event.submitter;
      if (current.hasAttribute('data-passkey-optional') && !(submitter && submitter.hasAttribute('data-passkey'))) return;
      event.preventDefault();
      if (!supported) {
        showError(current, 'This browser cannot use passkeys.');
        return;
      }
      if (!current.reportValidity()) return;
      run(current).catch(function () {
        showError(current, 'The passkey was not used: the browser cancelled or refused it. Try again.');
      });
    });
  }
})();
