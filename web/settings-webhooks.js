// Settings → Webhooks (docs/channels.md, "Webhooks"), owners only: the workspace's endpoints (add one,
// its signing secret shown once; change the events one is sent; turn one off and on; remove one) and
// each endpoint's delivery log.
import { dateText } from './dom.js';
import { S } from './strings-on-demand.js';

export async function webhooksPanel(page, { copyButton, refresh }) {
  const { api, el, announce } = page;
  const data = await api('GET', '/settings/webhooks');
  const note = el('div', { 'aria-live': 'polite' });
  const fail = (e) => note.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  const act = async (button, method, path, said) => {
    button.disabled = true;
    try { await api(method, path); if (said) announce(said); await refresh(); }
    catch (e) { button.disabled = false; fail(e); }
  };
  const list = el('ul', { class: 'connections endpoints' });
  for (const e of data.endpoints) list.append(endpointEl(page, e, act, data.events));
  return el('section', { class: 'panel', 'data-section': 'webhooks' },
    el('h2', {}, S.sections.webhooks[0]),
    el('p', { class: 'hint' }, S.webhooksIntro),
    data.endpoints.length ? list : el('p', { class: 'muted' }, S.noEndpoints),
    el('p', { class: 'muted' }, S.webhookLimit(data.endpoints.length, data.limit)),
    note,
    data.endpoints.length < data.limit ? addEl(page, data.events, copyButton, refresh) : null);
}

function offWhy(el, e) {
  const when = el('time', { datetime: e.disabledAt }, dateText(e.disabledAt));
  const why = e.disabledBy === 'owner'
    ? S.turnedOffByOwner((e.disabledReason || '').replace(/^turned off by /, ''), when)
    : S.turnedOffFailing(e.disabledReason || '', when);
  return el('p', { class: 'revoked-why', 'data-field': 'disabled-why', 'data-disabled-by': e.disabledBy || '' }, why);
}

function endpointEl(page, e, act, events) {
  const { el } = page;
  const id = encodeURIComponent(e.id);
  const li = el('li', { 'data-endpoint': e.id },
    el('div', { class: 'conn-name' }, el('strong', { class: 'mono' }, e.url), ' ',
      el('span', { class: 'badge', 'data-enabled': String(e.enabled) }, e.enabled ? S.endpointOn : S.endpointOff)),
    el('p', { class: 'muted' }, e.everyEvent ? S.everyEvent : e.events.join(', ')));
  if (!e.enabled) li.append(offWhy(el, e));
  const toggle = el('button', { type: 'button', class: 'secondary', 'data-action': e.enabled ? 'turn-off' : 'turn-on' },
    e.enabled ? S.turnOff : S.turnOn);
  toggle.addEventListener('click', () => act(toggle, 'POST', `/settings/webhooks/${id}/${e.enabled ? 'disable' : 'enable'}`));
  const remove = el('button', { type: 'button', class: 'secondary', 'data-action': 'remove-endpoint' }, S.remove);
  const yes = el('button', { type: 'button', class: 'danger', 'data-action': 'remove-endpoint-yes' }, S.removeIt);
  const no = el('button', { type: 'button', class: 'secondary' }, S.cancel);
  const sure = el('div', { class: 'confirm-revoke', hidden: true }, el('p', {}, S.removeEndpointPrompt),
    el('div', { class: 'actions' }, yes, no));
  remove.addEventListener('click', () => { remove.hidden = true; sure.hidden = false; });
  no.addEventListener('click', () => { sure.hidden = true; remove.hidden = false; });
  yes.addEventListener('click', () => act(yes, 'DELETE', `/settings/webhooks/${id}`, S.endpointRemoved));
  const edit = el('button', { type: 'button', class: 'secondary', 'data-action': 'edit-events',
    'aria-expanded': 'false' }, S.editEvents);
  const actions = el('div', { class: 'actions' }, toggle, edit, remove);
  edit.addEventListener('click', () => editEventsEl(page, e, events, edit, actions, (changed) => {
    const fresh = endpointEl(page, changed, act, events);
    li.replaceWith(fresh);
    fresh.querySelector('[data-action=edit-events]').focus();
  }));
  li.append(actions, sure, logEl(page, id));
  return li;
}

// "Edit events": the add form's event boxes, ticked as the endpoint is sent now, made when opened
// (so the add form's boxes stay the only ones on the page until then) and dropped when closed.
// Every box ticked sends no list (every event, those added later too), as adding does.
function editEventsEl({ api, el, announce }, e, events, edit, actions, saved) {
  const open = actions.nextElementSibling;
  if (open?.matches('form.edit-events')) { open.remove(); edit.setAttribute('aria-expanded', 'false'); return; }
  const boxes = eventBoxes(el, events, `events-${e.id}-`, (name) => e.everyEvent || e.events.includes(name));
  const save = el('button', { type: 'submit', class: 'primary', 'data-action': 'save-events' }, S.saveEvents);
  const cancel = el('button', { type: 'button', class: 'secondary' }, S.cancel);
  const out = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'edit-events', novalidate: true, 'data-field': 'edit-events' },
    el('fieldset', { class: 'toggle' }, el('legend', {}, S.endpointEvents), boxes.map(([, label]) => label)),
    el('p', { class: 'hint' }, S.editEventsHint),
    el('div', { class: 'actions' }, save, cancel), out);
  const close = () => { form.remove(); edit.setAttribute('aria-expanded', 'false'); edit.focus(); };
  cancel.addEventListener('click', close);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    save.disabled = true;
    out.replaceChildren();
    try {
      const chosen = ticked(boxes);
      const changed = await api('PATCH', `/settings/webhooks/${encodeURIComponent(e.id)}`,
        chosen ? { events: chosen } : { everyEvent: true });
      announce(S.eventsSaved);
      saved(changed);
    } catch (err) {
      save.disabled = false;
      out.append(el('p', { class: 'error', role: 'alert', 'data-field': err.field || '' }, err.message));
    }
  });
  actions.after(form);
  edit.setAttribute('aria-expanded', 'true');
  boxes[0][0].focus();
}

// One checkbox per event (its id: prefix + the event), ticked where checked(name): [box, its label] each.
function eventBoxes(el, events, prefix, checked) {
  return events.map((name) => {
    const box = el('input', { type: 'checkbox', id: prefix + name.replace('.', '-'), name: 'events', value: name });
    box.checked = checked(name);
    return [box, el('label', { for: box.id }, box, el('span', { class: 'mono' }, name))];
  });
}

// The events ticked, or null when every box is: every event, those added later too (no list sent).
function ticked(boxes) {
  const chosen = boxes.filter(([box]) => box.checked).map(([box]) => box.value);
  return chosen.length === boxes.length ? null : chosen;
}

// The delivery log, read when opened (and again each time).
function logEl({ api, el }, id) {
  const rows = el('ul', { class: 'connections deliveries' });
  const log = el('details', { class: 'earlier', 'data-field': 'delivery-log' }, el('summary', {}, S.deliveryLog), rows);
  log.addEventListener('toggle', async () => {
    if (!log.open) return;
    try {
      const { deliveries } = await api('GET', `/settings/webhooks/${id}/deliveries`);
      rows.replaceChildren(...(deliveries.length ? deliveries.map((d) => el('li', { 'data-delivery': d.id },
        el('div', { class: 'conn-name' }, el('strong', {}, d.event), ' · ',
          el('time', { datetime: d.createdAt }, dateText(d.createdAt)), ' ',
          el('span', { class: 'badge', 'data-state': d.state }, S.deliveryStates[d.state] || d.state)),
        el('p', { class: 'muted' }, S.deliveryFacts(d.statusCode, d.attempts),
          d.nextRetryAt ? S.nextRetry(el('time', { datetime: d.nextRetryAt }, dateText(d.nextRetryAt))) : null),
        d.error ? el('p', { class: 'muted' }, d.error) : null)) : [el('li', { class: 'muted' }, S.noDeliveries)]));
    } catch (e) {
      rows.replaceChildren(el('li', { class: 'error', role: 'alert' }, e.message));
    }
  });
  return log;
}

function addEl({ api, el }, events, copyButton, refresh) {
  const url = el('input', { id: 'webhook-url', name: 'url', type: 'url', required: true, maxlength: 2048,
    autocomplete: 'off', spellcheck: 'false', placeholder: S.endpointPlaceholder });
  const boxes = eventBoxes(el, events, 'webhook-event-', () => true);
  const send = el('button', { type: 'submit', class: 'primary', 'data-action': 'add-endpoint' }, S.addIt);
  const out = el('div', { class: 'new-token', 'aria-live': 'polite' });
  const form = el('form', { class: 'add-endpoint', novalidate: true },
    el('h3', {}, S.addEndpoint),
    el('label', { for: 'webhook-url' }, S.endpointUrl), url, el('p', { class: 'hint' }, S.endpointUrlHint),
    el('fieldset', { class: 'toggle' }, el('legend', {}, S.endpointEvents), boxes.map(([, label]) => label)),
    send, out);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    send.disabled = true;
    out.replaceChildren();
    url.removeAttribute('aria-invalid');
    try {
      const chosen = ticked(boxes);
      const made = await api('POST', '/settings/webhooks', chosen ? { url: url.value.trim(), events: chosen }
        : { url: url.value.trim() });
      const secret = el('input', { type: 'text', readonly: true, id: 'webhook-secret', class: 'secret',
        'aria-label': S.signingSecret });
      secret.value = made.secret;
      const done = el('button', { type: 'button', class: 'secondary', 'data-action': 'secret-done' }, S.done);
      done.addEventListener('click', () => refresh());
      out.append(el('div', { class: 'outcome ok' },
        el('p', { class: 'headline' }, S.signingSecretFor(el('span', { class: 'mono' }, made.endpoint.url))),
        el('p', {}, S.verifyWithSecret),
        el('div', { class: 'copy-row' }, secret, copyButton(el, secret)),
        done));
      secret.focus();
      secret.select();
    } catch (e) {
      send.disabled = false;
      if (e.field === 'url') { url.setAttribute('aria-invalid', 'true'); url.focus(); }
      out.append(el('p', { class: 'error', role: 'alert', 'data-field': e.field || '' }, e.message));
    }
  });
  return form;
}
