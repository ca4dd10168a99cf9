// countersign confirm page: the consent view of OAuth, at /confirm?authorize=<request id>.
// An MCP client sent the person here from /oauth/authorize. They see who asks and where the answer
// goes, choose the workspace, and Allow or Deny; the page then sends them back to the client's
// redirect URI, replacing itself in the history (the answer's code is never kept by this page).
// Every piece of text that comes from data is set with textContent (through el()).

export async function viewConsent(id, { api, el, show, announce }) {
  let request;
  try {
    request = await api('GET', '/oauth/requests/' + encodeURIComponent(id));
  } catch (e) {
    if (e.status === 401) throw e;
    show(el('h1', {}, 'Connect an agent'),
      el('p', { class: 'error', role: 'alert', 'data-outcome': e.code || 'error' }, e.message),
      el('p', { class: 'back' }, el('a', { href: '/confirm', 'data-nav': true }, 'See what waits for you')));
    return;
  }
  const client = request.client;
  const facts = el('dl', { class: 'consent-facts' },
    el('dt', {}, 'Agent'), el('dd', { 'data-field': 'client-name' }, client.name),
    el('dt', {}, 'Identified by'),
    el('dd', { 'data-field': 'client-host' }, client.metadataDocument ? client.host : 'a registration with this server'),
    el('dt', {}, 'Sends you back to'),
    el('dd', { 'data-field': 'redirect-host' }, request.redirectHost,
      request.loopback ? el('span', { class: 'muted' }, ' (an app on this device)') : null),
    el('dt', {}, 'Full address'), el('dd', { class: 'mono', 'data-field': 'redirect-uri' }, request.redirectUri));

  const choices = request.workspaces.map((w, i) => {
    const input = el('input', { type: 'radio', name: 'workspace', id: 'ws-' + i, value: w.id });
    input.checked = i === 0;
    return el('div', { class: 'choice' }, input, el('label', { for: 'ws-' + i }, w.name));
  });
  const workspace = el('fieldset', { class: 'workspaces' }, el('legend', {}, 'Connect it to'), choices);

  const allowBtn = el('button', { type: 'submit', class: 'primary', 'data-action': 'allow' }, 'Allow');
  const denyBtn = el('button', { type: 'button', class: 'secondary', 'data-action': 'deny' }, 'Deny');
  const note = el('div', { class: 'outcome-slot', 'aria-live': 'polite' });
  const form = el('form', { class: 'consent' }, workspace,
    el('p', { class: 'hint' }, 'It can read what your agents can read. Every write it asks for waits for you ',
      'here, as with any agent. You can revoke it in Settings at any time.'),
    el('div', { class: 'actions' }, allowBtn, denyBtn), note);

  const answer = async (verb, body, btn, label) => {
    allowBtn.disabled = denyBtn.disabled = true;
    const before = btn.textContent;
    btn.textContent = label;
    try {
      const done = await api('POST', `/oauth/requests/${encodeURIComponent(id)}/${verb}`, body);
      const text = verb === 'allow' ? `Connected. Returning you to ${client.name}…` : `Denied. Returning you to ${client.name}…`;
      note.replaceChildren(el('div', { class: 'outcome ' + (verb === 'allow' ? 'ok' : 'warn'), 'data-outcome': verb },
        el('p', { class: 'headline' }, text)));
      announce(text);
      location.replace(done.redirectTo);
    } catch (e) {
      btn.textContent = before;
      if (e.status === 404 || e.status === 401) {
        note.replaceChildren(el('p', { class: 'error', role: 'alert', 'data-outcome': e.code || 'error' }, e.message));
        return;
      }
      allowBtn.disabled = denyBtn.disabled = false;
      note.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const chosen = form.querySelector('input[name="workspace"]:checked');
    answer('allow', { workspaceId: chosen ? chosen.value : '' }, allowBtn, 'Allowing…');
  });
  denyBtn.addEventListener('click', () => answer('deny', undefined, denyBtn, 'Denying…'));

  show(el('h1', {}, 'Connect ', el('span', { 'data-field': 'title-name' }, client.name), '?'),
    el('p', {}, el('strong', {}, client.name), ' asks to act for you in countersign.'),
    facts, form);
}
