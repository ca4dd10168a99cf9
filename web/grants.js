// Standing grants (docs/policy.md): "Allow this again…" on a card an agent filed (a short form drafted
// by the options endpoint, which files the grant's own card for the person to confirm), and
// Settings, Grants: each grant with its bounds in words, uses left, expiry, each use, and Revoke.
// Loaded when pressed, or for that section (settings.js).
import { dateText, el, timeEl } from './dom.js';
import { S } from './strings-on-demand.js';

// A labelled control with its refusal beside it: [row, control, note].
function field(id, label, control, hint) {
  const note = el('p', { class: 'error field-error', id: id + '-error', 'aria-live': 'polite' });
  control.setAttribute('aria-describedby', id + '-error');
  return [el('div', { class: 'grant-field', 'data-field': id }, el('label', { for: id }, label), control,
    hint ? el('p', { class: 'hint' }, hint) : null, note), control, note];
}

const numberInput = (id, value, decimals) => {
  const input = el('input', { type: 'text', id, name: id, autocomplete: 'off', inputmode: decimals ? 'decimal' : 'numeric' });
  input.value = value === undefined || value === null ? '' : String(value);
  return input;
};

const whole = (typed) => (/^\d+$/.test(typed.trim()) ? Number(typed.trim()) : typed.trim());

// The form, drafted from the card: its connection, its tool, its values as each bound's limit.
export async function openGrant(article, card, { api, navigate }, row, button) {
  const slot = article.querySelector('.outcome-slot');
  let options;
  try {
    options = await api('GET', '/standing-grants/options?card=' + encodeURIComponent(card.id));
  } catch (e) {
    button.replaceWith(el('p', { class: 'error', role: 'alert', 'data-grant-refused': true }, e.message));
    return;
  }
  const draft = options.draft;
  const key = (name) => `grant-${card.id}-${name}`;
  const notes = {};
  const rows = [];
  const add = ([rowEl, control, note], name) => { notes[name] = [note, control]; rows.push(rowEl); return control; };
  const name = el('input', { type: 'text', id: key('name'), name: 'name', maxlength: 80, autocomplete: 'off' });
  name.value = draft.tool;
  add(field(key('name'), S.grantName, name), 'name');
  const limits = [];
  let amount = null;
  for (const b of draft.bounds) {
    if (b.kind === 'max') {
      amount = b;
      const input = add(field(key(b.argument), S.grantMax(b.label, b.unit.trim()), numberInput(key(b.argument), b.value, b.places)),
        'limits.' + b.argument);
      limits.push([b.argument, () => input.value.trim()]);
    } else {
      const boxes = (b.choices || []).map((c) => {
        const box = el('input', { type: 'checkbox', id: key(b.argument + '-' + c.value), value: c.value });
        box.checked = (b.value || []).includes(c.value);
        return [box, el('label', { class: 'choice', for: box.id }, box, el('span', {}, c.name))];
      });
      const note = el('p', { class: 'error field-error', 'aria-live': 'polite' });
      const set = el('fieldset', { class: 'grant-choices', 'data-field': key(b.argument) },
        el('legend', {}, S.grantAllowed(b.label)), boxes.map(([, label]) => label), note);
      notes['limits.' + b.argument] = [note, boxes[0] ? boxes[0][0] : set];
      rows.push(set);
      limits.push([b.argument, () => boxes.filter(([box]) => box.checked).map(([box]) => box.value)]);
    }
  }
  const uses = add(field(key('uses'), S.grantUses, numberInput(key('uses'), 3), S.grantUsesHint(options.maxUses)), 'uses');
  const days = add(field(key('days'), S.grantDays, numberInput(key('days'), 7), S.grantDaysHint(options.maxDays)), 'days');
  const cap = amount ? add(field(key('cap'), S.grantCap(amount.unit.trim()), numberInput(key('cap'), '', amount.places),
    S.grantCapHint), 'cap') : null;
  const formNote = el('p', { class: 'error field-error', 'aria-live': 'polite' });
  const send = el('button', { type: 'submit', class: 'primary', 'data-action': 'request-grant' }, S.requestGrant);
  const cancel = el('button', { type: 'button', class: 'secondary' }, S.cancel);
  const form = el('form', { class: 'grant-form' }, el('p', { class: 'label' }, S.grantIntro(card.connectionName || '')),
    rows, el('p', { class: 'hint' }, S.grantConfirmHint), formNote, el('div', { class: 'actions' }, send, cancel));
  cancel.addEventListener('click', () => { form.remove(); row.hidden = false; button.focus(); });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const [note, control] of Object.values(notes)) { note.textContent = ''; control.removeAttribute('aria-invalid'); }
    formNote.textContent = '';
    const body = { connectionId: draft.connectionId, tool: draft.tool, name: name.value.trim(),
      limits: Object.fromEntries(limits.map(([arg, value]) => [arg, value()])),
      uses: whole(uses.value), days: whole(days.value) };
    if (cap && cap.value.trim()) body.cap = cap.value.trim();
    send.disabled = cancel.disabled = true;
    try {
      const filed = await api('POST', '/standing-grants', body);
      navigate('/confirm?card=' + encodeURIComponent(filed.id));
    } catch (e) {
      send.disabled = cancel.disabled = false;
      const at = notes[e.field];
      if (e.status === 422 && at) {
        at[0].textContent = e.message;
        at[1].setAttribute('aria-invalid', 'true');
        at[1].focus();
      } else formNote.textContent = e.message;
    }
  });
  slot.replaceChildren();
  row.hidden = true;
  row.after(form);
  name.focus();
}

// ---- Settings, Grants

const STATES = () => S.grantStates;

function useEl(u) {
  return el('li', { 'data-use': u.cardId }, timeEl(u.at) || dateText(u.at),
    u.amount ? [' · ', el('bdi', {}, u.amount)] : null, ' · ',
    el('a', { href: '/confirm?card=' + encodeURIComponent(u.cardId), 'data-nav': true }, S.seeCard));
}

function grantEl(g, { api, announce }) {
  const li = el('li', { class: 'grant', 'data-grant-id': g.id, 'data-state': g.state });
  const draw = () => {
    li.dataset.state = g.state;
    const uses = Array.isArray(g.useList) ? g.useList : [];
    const ended = g.state === 'revoked' ? S.grantRevokedAt(dateText(g.revokedAt)) : S.grantExpires(dateText(g.expiresAt));
    li.replaceChildren(
      el('div', { class: 'grant-head' }, el('strong', {}, el('bdi', {}, g.name)),
        el('span', { class: 'badge', 'data-field': 'state' }, STATES()[g.state] || g.state)),
      el('p', { class: 'grant-who' }, S.grantWho(el('bdi', {}, g.connectionName || S.aConnection), el('code', {}, g.tool))),
      el('ul', { class: 'grant-terms' }, (g.terms || []).map((t) => el('li', {}, t))),
      el('p', { 'data-field': 'uses-left' }, S.usesLeft(g.usesLeft, g.uses),
        g.cap ? [' · ', S.capLeft(g.capLeft, g.cap)] : null),
      el('p', { class: 'muted', 'data-field': 'expires' }, ended),
      el('details', { class: 'grant-uses', 'data-field': 'use-list' }, el('summary', {}, S.grantUseCount(uses.length)),
        uses.length ? el('ul', {}, uses.map(useEl)) : el('p', { class: 'muted' }, S.noUsesYet)));
    if (g.state !== 'active') return;
    const revoke = el('button', { type: 'button', class: 'secondary', 'data-action': 'revoke-grant' }, S.revoke);
    const yes = el('button', { type: 'button', class: 'danger', 'data-action': 'revoke-grant-yes' }, S.revokeIt);
    const no = el('button', { type: 'button', class: 'secondary' }, S.cancel);
    const ask = el('div', { class: 'confirm-revoke', hidden: true }, el('p', {}, S.revokeGrantPrompt),
      el('div', { class: 'actions' }, yes, no));
    revoke.addEventListener('click', () => { revoke.hidden = true; ask.hidden = false; yes.focus(); });
    no.addEventListener('click', () => { ask.hidden = true; revoke.hidden = false; revoke.focus(); });
    yes.addEventListener('click', async () => {
      yes.disabled = no.disabled = true;
      try {
        Object.assign(g, await api('POST', `/standing-grants/${encodeURIComponent(g.id)}/revoke`));
        draw();
        announce(S.grantWasRevoked(g.name));
      } catch (e) {
        yes.disabled = no.disabled = false;
        ask.append(el('p', { class: 'error', role: 'alert' }, e.message));
      }
    });
    li.append(el('div', { class: 'actions' }, revoke), ask);
  };
  draw();
  return li;
}

export async function grantsPanel(page) {
  const data = await page.api('GET', '/standing-grants');
  const grants = data.grants || [];
  return el('section', { class: 'panel', 'data-section': 'grants' }, el('h2', {}, S.grants),
    el('p', { class: 'hint' }, S.grantsHint),
    grants.length ? el('ul', { class: 'grants' }, grants.map((g) => grantEl(g, page)))
      : el('p', { class: 'muted', 'data-field': 'no-grants' }, S.noGrants),
    data.rules && data.rules.length ? el('p', { class: 'muted', 'data-field': 'rules' }, S.grantRules(data.rules.join(', ')))
      : null);
}
