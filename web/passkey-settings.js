// Settings: the person's passkeys (add, rename, remove) and, for the owner, the workspace's
// passkey policy. Changing the policy files a request the owner then confirms (under the
// current policy, with their passkey if it asks for one).
import { addPasskey, available, removePasskey, UNAVAILABLE } from './passkeys.js';

const POLICIES = [
  ['never', 'Never'],
  ['risky', 'For requests that spend, send, grant or cannot be undone'],
  ['every', 'For every request'],
];

// The passkey's public-key fingerprint: the string `countersign verify-receipt` prints for the
// passkey that signed a receipt, so the two can be compared by eye.
function fingerprintEl(el, p) {
  if (!p.fingerprint) return null;
  return el('p', { class: 'muted fingerprint' }, 'Public key fingerprint: ',
    el('code', { 'data-fingerprint': p.fingerprint }, p.fingerprint));
}

export async function passkeysPanel({ api, el, announce, navigate, refresh }) {
  const data = await api('GET', '/passkeys');
  const note = el('div', { 'aria-live': 'polite' });
  const fail = (e) => note.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : 'never');
  const list = el('ul', { class: 'passkeys' });
  for (const p of data.passkeys) {
    const name = el('input', { type: 'text', value: p.name, maxlength: 64, 'aria-label': 'Name of this passkey' });
    const save = el('button', { type: 'button', class: 'secondary', 'data-action': 'rename-passkey' }, 'Rename');
    const remove = el('button', { type: 'button', class: 'danger', 'data-action': 'remove-passkey' }, 'Remove');
    save.addEventListener('click', async () => {
      try { await api('PATCH', `/passkeys/${encodeURIComponent(p.id)}`, { name: name.value }); announce('Renamed.'); }
      catch (e) { fail(e); }
    });
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try { await removePasskey(api, p.id); announce('Passkey removed.'); await refresh(); }
      catch (e) { fail(e); remove.disabled = false; }
    });
    list.append(el('li', { 'data-passkey': p.id }, name, el('span', { class: 'muted' },
      ` added ${when(p.createdAt)} · last used ${when(p.lastUsedAt)} `), save, remove, fingerprintEl(el, p)));
  }
  const newName = el('input', { type: 'text', id: 'passkey-name', maxlength: 64, value: 'My passkey' });
  const add = el('button', { type: 'button', class: 'primary', 'data-action': 'add-passkey' }, 'Add a passkey');
  add.addEventListener('click', async () => {
    add.disabled = true;
    note.replaceChildren();
    try { await addPasskey(api, newName.value.trim() || 'Passkey'); announce('Passkey added.'); await refresh(); }
    catch (e) { fail(e); add.disabled = false; }
  });
  if (!available()) add.disabled = true;
  const parts = [el('h2', {}, 'Passkeys'),
    el('p', { class: 'muted' }, 'Sign in, and confirm requests your workspace protects, with your device\'s '
      + 'screen lock. The email link keeps working.'),
    data.passkeys.length ? list : el('p', {}, 'No passkeys yet.'),
    available() ? el('div', { class: 'actions' }, el('label', { for: 'passkey-name' }, 'Name'), newName, add)
      : el('p', { class: 'notice' }, UNAVAILABLE),
    el('p', {}, 'Workspace policy: a passkey is needed to confirm ', el('strong', { 'data-policy': data.policy },
      data.policyText), '.')];
  if (data.canChangePolicy) {
    const select = el('select', { id: 'passkey-policy' },
      POLICIES.map(([v, label]) => el('option', v === data.policy ? { value: v, selected: true } : { value: v }, label)));
    const ask = el('button', { type: 'button', class: 'secondary', 'data-action': 'request-policy' }, 'Request change');
    ask.addEventListener('click', async () => {
      try {
        const card = await api('POST', '/settings/passkey-policy', { policy: select.value });
        navigate('/confirm?card=' + encodeURIComponent(card.id));
      } catch (e) { fail(e); }
    });
    parts.push(el('div', { class: 'actions' }, el('label', { for: 'passkey-policy' }, 'Require a passkey'), select, ask),
      el('p', { class: 'muted' }, 'A change waits for your confirmation like any request.'));
  }
  parts.push(note);
  return el('section', { class: 'panel', 'data-section': 'passkeys' }, parts);
}
