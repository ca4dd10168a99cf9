// Settings: the workspace's upstream MCP servers (docs/gateway.md), for owners and admins. Adding
// one, approving its tools again and removing it each file a card, answered like any other. A
// credential typed here is sent once, sealed by the server, and never shown again (nor kept here).
import { S } from './strings-on-demand.js';

const FIELDS = ['name', 'url', 'credentialHeader', 'credential'];

export async function upstreamsPanel({ api, el }) {
  const { upstreams } = await api('GET', '/settings/upstreams');
  const panel = el('section', { class: 'panel', id: 'upstreams', 'data-section': 'upstreams' },
    el('h2', {}, S.upstreamServers));
  const file = async (button, method, path, body) => {
    button.disabled = true;
    try {
      const filed = await api(method, path, body);
      location.assign(filed.url);
      return null;
    } catch (e) {
      button.disabled = false;
      return e;
    }
  };
  const failed = (button) => async (method, path) => {
    const e = await file(button, method, path);
    if (e) button.after(el('p', { class: 'error', role: 'alert' }, e.message || S.failed));
  };
  if (!upstreams.length) panel.append(el('p', { class: 'muted' }, S.noneYet));
  for (const u of upstreams || []) {
    const refresh = el('button', { type: 'button', class: 'secondary' }, S.approveAgain);
    const remove = el('button', { type: 'button', class: 'secondary' }, S.remove);
    refresh.addEventListener('click', () => failed(refresh)('POST', `/settings/upstreams/${u.name}/refresh`));
    remove.addEventListener('click', () => failed(remove)('DELETE', `/settings/upstreams/${u.name}`));
    panel.append(el('div', { class: 'upstream', 'data-upstream': u.name },
      el('h3', {}, u.name),
      el('p', { class: 'muted mono' }, `${u.transport}: ${u.where}`, u.credential ? S.credentialSet : ''),
      el('ul', {}, u.tools.map((t) => el('li', {}, el('code', {}, t.name), S.upstreamTool(t.title, S.toolClasses[t.cls] || t.cls),
        t.witness.length ? S.witness(t.witness.map((w) => w.tool).join(', ')) : ''))),
      el('div', { class: 'actions' }, refresh, remove)));
  }
  panel.append(addForm(el, file));
  return panel;
}

function addForm(el, file) {
  const input = (id, label, attrs, hint) => {
    const field = el('input', { id: 'upstream-' + id, name: id, autocomplete: 'off', spellcheck: 'false', ...attrs });
    return [field, el('label', { for: field.id }, label), field, hint ? el('p', { class: 'hint muted' }, hint) : null];
  };
  const [name, ...nameRow] = input('name', S.serverName, { type: 'text', required: true, maxlength: 16,
    pattern: '[a-z][a-z0-9]{0,15}', placeholder: 'files' }, S.serverNameHint);
  const [url, ...urlRow] = input('url', S.serverUrl, { type: 'url', required: true, maxlength: 2048,
    placeholder: 'https://mcp.example.com/mcp' }, S.serverUrlHint);
  const [header, ...headerRow] = input('credentialHeader', S.credentialHeader,
    { type: 'text', maxlength: 64, value: 'Authorization' });
  const [secret, ...secretRow] = input('credential', S.credential, { type: 'password', maxlength: 4096,
    autocomplete: 'new-password', placeholder: 'Bearer …' }, S.credentialHint);
  const note = el('div', { 'aria-live': 'polite' });
  const send = el('button', { type: 'submit', class: 'primary', 'data-action': 'add-upstream' }, S.requestToAdd);
  const form = el('form', { class: 'add-upstream', novalidate: true },
    el('h3', {}, S.addUpstream), nameRow, urlRow, headerRow, secretRow, send, note,
    el('p', { class: 'muted' }, S.upstreamWaits));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    note.replaceChildren();
    for (const f of [name, url, header, secret]) f.removeAttribute('aria-invalid');
    const body = { name: name.value.trim(), url: url.value.trim() };
    if (secret.value) Object.assign(body, { credential: secret.value, credentialHeader: header.value.trim() });
    const e = await file(send, 'POST', '/settings/upstreams', body);
    if (!e) return;
    const bad = { name, url, credentialHeader: header, credential: secret }[FIELDS.find((f) => f === e.field)];
    if (bad) { bad.setAttribute('aria-invalid', 'true'); bad.focus(); }
    note.replaceChildren(el('p', { class: 'error', role: 'alert', 'data-field': e.field || '' }, e.message));
  });
  return form;
}
