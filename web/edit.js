// What a card offers beside Confirm and Decline (cards.js loads this for a card whose view sets more):
// Edit (the fields its action declares, checked by the server as an agent's call is; a new card
// with a new preview replaces this one, to confirm on its own), "Allow this again…" (grants.js,
// loaded when pressed), on an edited card what was changed, by whom, and on a card a standing grant
// answered, which grant (docs/policy.md).
import { announce, el, viewsStyle } from './dom.js';
import { S } from './strings-on-demand.js';

// The last argument is what it uses of cards.js (api, navigate, cardEl), handed over so that edit.js
// imports nothing back from the module that loads it.
export async function more(article, card, opts, { api, navigate, cardEl }) {
  await viewsStyle();
  const page = { api, navigate, cardEl, opts };
  if (card.edited) article.querySelector('.meta').before(editedEl(card.edited));
  const headline = article.querySelector('[data-outcome="edited"] .headline');
  if (headline) headline.textContent = S.outcomeEdited;
  const ran = card.grant && article.querySelector('[data-outcome] .headline');
  if (ran) ran.after(el('p', { 'data-grant': card.grant.id }, S.ranUnderGrant(el('bdi', {}, card.grant.name))));
  const row = article.querySelector('.answer > .actions');
  if (!row) return;
  if (card.canEdit) {
    const edit = el('button', { type: 'button', class: 'secondary', 'data-action': 'edit' }, S.edit);
    edit.addEventListener('click', () => openEdit(article, card, page, row, edit));
    row.querySelector('[data-action="confirm"]').after(edit);
  }
  if (card.canGrant) {
    const allow = el('button', { type: 'button', class: 'secondary', 'data-action': 'allow-again' }, S.allowAgain);
    allow.addEventListener('click', async () => {
      allow.disabled = true;
      try {
        (await import('./grants.js')).openGrant(article, card, page, row, allow);
      } finally { allow.disabled = false; }
    });
    row.append(allow);
  }
}

// "Changed by Ana: amount budgeted 120.00 → 80.00", and on the card it replaced, a link to the new one.
function editedEl(edited) {
  const changes = Array.isArray(edited.changes) ? edited.changes : [];
  return el('div', { class: 'edited', 'data-edited': edited.into ? 'into' : 'from' },
    el('p', { class: 'label' }, S.changedBy(el('bdi', {}, edited.by || S.aMember))),
    el('ul', { class: 'lines' }, changes.map((c) => el('li', {}, c.label || c.field, ': ',
      el('bdi', {}, String(c.from)), ' → ', el('bdi', {}, String(c.to))))),
    edited.into ? el('p', {}, el('a', { href: '/confirm?card=' + encodeURIComponent(edited.into), 'data-nav': true },
      S.seeNewCard)) : null);
}

// A typed input per field, its current value in it; a refusal beside its field, nothing changed.
async function openEdit(article, card, { api, cardEl, opts }, row, button) {
  button.disabled = true;
  let fields = Array.isArray(card.editable) && card.editable.length ? card.editable : null;
  const slot = article.querySelector('.outcome-slot');
  try {
    if (!fields) fields = (await api('GET', '/cards/' + encodeURIComponent(card.id))).editable || [];
  } catch (e) {
    slot.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
    return;
  } finally { button.disabled = false; }
  const notes = {};
  const inputs = fields.map((f) => {
    const id = `edit-${card.id}-${f.name}`;
    const attrs = { id, name: f.name, autocomplete: 'off', 'aria-describedby': id + '-error' };
    const input = f.kind === 'text' ? el('textarea', { ...attrs, rows: 3 })
      : el('input', { ...attrs, type: 'text', inputmode: f.kind === 'amount' ? 'decimal' : 'numeric' });
    input.value = f.value === null || f.value === undefined ? '' : String(f.value);
    notes[f.name] = el('p', { class: 'error field-error', id: id + '-error', 'aria-live': 'polite' });
    return [f, input];
  });
  const formNote = el('p', { class: 'error field-error', 'aria-live': 'polite' });
  const save = el('button', { type: 'submit', class: 'primary', 'data-action': 'save-edit' }, S.saveEdit);
  const cancel = el('button', { type: 'button', class: 'secondary', 'data-action': 'cancel-edit' }, S.cancel);
  const form = el('form', { class: 'edit-form' },
    el('p', { class: 'hint' }, S.editHint),
    inputs.map(([f, input]) => el('div', { class: 'edit-field' },
      el('label', { for: input.id }, f.label || f.name), input, notes[f.name])),
    formNote, el('div', { class: 'actions' }, save, cancel));
  const close = () => { form.remove(); row.hidden = false; button.focus(); };
  cancel.addEventListener('click', close);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const n of [...Object.values(notes), formNote]) n.textContent = '';
    for (const [, input] of inputs) input.removeAttribute('aria-invalid');
    const values = {};
    for (const [f, input] of inputs) {
      const typed = input.value.trim();
      if (typed === String(f.value ?? '')) continue;
      values[f.name] = f.kind === 'whole number' && /^-?\d+$/.test(typed) ? Number(typed) : typed;
    }
    save.disabled = cancel.disabled = true;
    try {
      const fresh = await api('POST', `/cards/${encodeURIComponent(card.id)}/edit`, { arguments: values });
      const shown = cardEl(fresh, opts);
      article.replaceWith(shown);
      if (new URLSearchParams(location.search).get('card') === card.id) {
        history.replaceState(null, '', '/confirm?card=' + encodeURIComponent(fresh.id));
      }
      shown.querySelector('[data-action="confirm"]')?.focus();
      announce(S.editedNewCard);
    } catch (e) {
      save.disabled = cancel.disabled = false;
      const name = (e.field || '').split('.').pop();
      const pair = inputs.find(([f]) => f.name === name);
      if (e.status === 422 && pair) {
        notes[name].textContent = e.message;
        pair[1].setAttribute('aria-invalid', 'true');
        pair[1].focus();
      } else formNote.textContent = e.message;
    }
  });
  row.hidden = true;
  row.after(form);
  inputs[0]?.[1].focus();
}
