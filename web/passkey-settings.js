// Settings: the person's passkeys (add, rename, remove) and, for the owner, the workspace's
// passkey policy. Changing the policy files a request the owner then confirms (under the
// current policy, with their passkey if it asks for one).
import { dateText } from './dom.js';
import { addPasskey, available, removePasskey } from './passkeys.js';
import { S } from './strings-on-demand.js';

// The passkey's public-key fingerprint: the string `countersign verify-receipt` prints for the
// passkey that signed a receipt, so the two can be compared by eye.
function fingerprintEl(el, p) {
  if (!p.fingerprint) return null;
  return el('p', { class: 'muted fingerprint' }, S.fingerprint,
    el('code', { 'data-fingerprint': p.fingerprint }, p.fingerprint));
}

export async function passkeysPanel({ api, el, announce, navigate, refresh }) {
  const data = await api('GET', '/passkeys');
  const note = el('div', { 'aria-live': 'polite' });
  const fail = (e) => note.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  const list = el('ul', { class: 'passkeys' });
  for (const p of data.passkeys) {
    const name = el('input', { type: 'text', value: p.name, maxlength: 64, 'aria-label': S.passkeyName });
    const save = el('button', { type: 'button', class: 'secondary', 'data-action': 'rename-passkey' }, S.rename);
    const remove = el('button', { type: 'button', class: 'danger', 'data-action': 'remove-passkey' }, S.remove);
    save.addEventListener('click', async () => {
      try { await api('PATCH', `/passkeys/${encodeURIComponent(p.id)}`, { name: name.value }); announce(S.renamed); }
      catch (e) { fail(e); }
    });
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try { await removePasskey(api, p.id); announce(S.passkeyRemoved); await refresh(); }
      catch (e) { fail(e); remove.disabled = false; }
    });
    list.append(el('li', { 'data-passkey': p.id }, name, el('span', { class: 'muted' },
      S.passkeyAddedUsed(dateText(p.createdAt), dateText(p.lastUsedAt))), save, remove, fingerprintEl(el, p)));
  }
  const newName = el('input', { type: 'text', id: 'passkey-name', maxlength: 64, value: S.defaultPasskeyName });
  const add = el('button', { type: 'button', class: 'primary', 'data-action': 'add-passkey' }, S.addPasskey);
  add.addEventListener('click', async () => {
    add.disabled = true;
    note.replaceChildren();
    try { await addPasskey(api, newName.value.trim() || S.unnamedPasskey); announce(S.passkeyAdded); await refresh(); }
    catch (e) { fail(e); add.disabled = false; }
  });
  if (!available()) add.disabled = true;
  const parts = [el('h2', {}, S.passkeys),
    el('p', { class: 'muted' }, S.passkeysIntro),
    data.passkeys.length ? list : el('p', {}, S.noPasskeys),
    available() ? el('div', { class: 'actions' }, el('label', { for: 'passkey-name' }, S.nameLabel), newName, add)
      : el('p', { class: 'notice' }, S.passkeyUnavailable),
    el('p', {}, S.policyIs(el('strong', { 'data-policy': data.policy }, data.policyText)))];
  if (data.canChangePolicy) {
    const select = el('select', { id: 'passkey-policy' },
      Object.entries(S.policies).map(([v, label]) =>
        el('option', v === data.policy ? { value: v, selected: true } : { value: v }, label)));
    const ask = el('button', { type: 'button', class: 'secondary', 'data-action': 'request-policy' }, S.requestChange);
    ask.addEventListener('click', async () => {
      try {
        const card = await api('POST', '/settings/passkey-policy', { policy: select.value });
        navigate('/confirm?card=' + encodeURIComponent(card.id));
      } catch (e) { fail(e); }
    });
    parts.push(el('div', { class: 'actions' }, el('label', { for: 'passkey-policy' }, S.requirePasskey), select, ask),
      el('p', { class: 'muted' }, S.changeWaits));
  }
  parts.push(note);
  return el('section', { class: 'panel', 'data-section': 'passkeys' }, parts);
}
