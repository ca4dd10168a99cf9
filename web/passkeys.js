// Passkeys: WebAuthn straight from the browser (no library). Sign in (a button, and the browser's
// autofill), confirm a card under the workspace's policy, add and remove one (Settings).
import { S } from './strings.js';

const native = (name) => typeof PublicKeyCredential !== 'undefined' && typeof PublicKeyCredential[name] === 'function';
export const b64uToBuf = (s) =>
  Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)).buffer;
export const bufToB64u = (b) => {
  let s = ''; for (const x of new Uint8Array(b)) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const ids = (list) => (list || []).map((c) => ({ ...c, id: b64uToBuf(c.id) }));
const creationOptions = (o) => native('parseCreationOptionsFromJSON')
  ? PublicKeyCredential.parseCreationOptionsFromJSON(o)
  : { ...o, challenge: b64uToBuf(o.challenge), user: { ...o.user, id: b64uToBuf(o.user.id) },
      excludeCredentials: ids(o.excludeCredentials) };
const requestOptions = (o) => native('parseRequestOptionsFromJSON')
  ? PublicKeyCredential.parseRequestOptionsFromJSON(o)
  : { ...o, challenge: b64uToBuf(o.challenge), allowCredentials: ids(o.allowCredentials) };
function credentialToJSON(c) {
  if (typeof c.toJSON === 'function') return c.toJSON();
  const r = c.response, out = { id: c.id, rawId: bufToB64u(c.rawId), type: c.type,
    authenticatorAttachment: c.authenticatorAttachment, clientExtensionResults: c.getClientExtensionResults(),
    response: { clientDataJSON: bufToB64u(r.clientDataJSON) } };
  if (r.attestationObject) Object.assign(out.response, { attestationObject: bufToB64u(r.attestationObject),
    transports: r.getTransports ? r.getTransports() : [] });
  else Object.assign(out.response, { authenticatorData: bufToB64u(r.authenticatorData),
    signature: bufToB64u(r.signature), userHandle: r.userHandle ? bufToB64u(r.userHandle) : undefined });
  return out;
}

export const available = () => typeof PublicKeyCredential !== 'undefined' && !!navigator.credentials;
// Cancel, timeout, failed verification and an unknown passkey all look alike to the page.
function explain(e) {
  if (e && (e.name === 'NotAllowedError' || e.name === 'AbortError')) return S.passkeyCancelled;
  if (e && e.name === 'InvalidStateError') return S.passkeyAlreadyHere;
  return (e && e.message) || S.passkeyCancelled;
}

let pending = null; // the conditional (autofill) request; one WebAuthn request at a time

async function getAssertion(options, conditional) {
  if (pending) pending.abort();
  const ac = new AbortController();
  if (!conditional) pending = null; else pending = ac;
  const cred = await navigator.credentials.get({ publicKey: requestOptions(options), signal: ac.signal,
    ...(conditional ? { mediation: 'conditional' } : {}) });
  return credentialToJSON(cred);
}

export function signinWithPasskey(api, onSession) {
  const btn = document.createElement('button');
  btn.type = 'button'; btn.className = 'secondary wide'; btn.dataset.action = 'passkey-signin';
  btn.textContent = S.passkeySignin;
  const note = document.createElement('div'); note.setAttribute('aria-live', 'polite');
  const fail = (msg) => { const p = document.createElement('p'); p.className = 'error'; p.setAttribute('role', 'alert');
    p.textContent = msg; note.replaceChildren(p); };
  const finish = async (options, conditional) => {
    const credential = await getAssertion(options, conditional);
    onSession(await api('POST', '/signin/passkey', { credential }));
  };
  if (!available()) {
    btn.disabled = true;
    note.textContent = S.passkeySigninUnavailable;
    return [btn, note];
  }
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    note.replaceChildren();
    try { await finish(await api('POST', '/signin/passkey/options'), false); }
    catch (e) { fail(e.status ? e.message : explain(e)); btn.disabled = false; }
  });
  // Autofill: the browser offers the person's passkeys in the email field's suggestions.
  (async () => {
    try {
      if (!(await PublicKeyCredential.isConditionalMediationAvailable?.())) return;
      await finish(await api('POST', '/signin/passkey/options'), true);
    } catch (e) { /* aborted by the button, or no passkey here: the button and the email link remain */ }
  })();
  return [btn, note];
}

export async function confirmWithPasskey(api, cardId) {
  if (!available()) throw Object.assign(new Error(S.passkeyUnavailable), { code: 'passkey_unavailable' });
  const path = `/cards/${encodeURIComponent(cardId)}/passkey`;
  const options = await api('POST', path + '/options');
  let credential;
  try { credential = await getAssertion(options.publicKey, false); }
  catch (e) { throw Object.assign(new Error(explain(e)), { code: 'passkey_cancelled' }); }
  return api('POST', path + '/confirm', { credential });
}

export async function addPasskey(api, name) {
  if (!available()) throw new Error(S.passkeyUnavailable);
  const options = await api('POST', '/passkeys/register/options');
  let cred;
  try { cred = await navigator.credentials.create({ publicKey: creationOptions(options) }); }
  catch (e) { throw new Error(explain(e)); }
  return api('POST', '/passkeys', { credential: credentialToJSON(cred), name });
}

export async function removePasskey(api, id) {
  const path = `/passkeys/${encodeURIComponent(id)}/remove`;
  try { return await api('POST', path); } catch (e) {
    if (e.code !== 'fresh_proof_needed' || !available()) throw e;
  }
  const options = await api('POST', '/passkeys/remove/options');
  let credential;
  try { credential = await getAssertion(options, false); } catch (e) { throw new Error(explain(e)); }
  return api('POST', path, { credential });
}
