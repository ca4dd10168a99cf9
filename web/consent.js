// countersign confirm page: the consent view of OAuth, at /confirm?authorize=<request id>.
// An MCP client sent the person here from /oauth/authorize. They see who asks and where the answer
// goes, choose the workspace, and Allow or Deny; the page then sends them back to the client's
// redirect URI, replacing itself in the history (the answer's code is never kept by this page).
// A client's name is what it says of itself unless a host vouches for it (its metadata document's
// host, where it also returns): the view says which. A request /oauth/authorize refused without a
// way back to the client comes here as /confirm?authorize_error=<why> (viewConsentRefused).
// Every piece of text that comes from data is set with textContent (through el()).

// What a refused request's view says, by the reason the server gives (no text from the request).
const REFUSED = {
  unknown_client: ['This app is not registered here',
    'The app asked to connect with a registration countersign does not know: it was made with another '
    + 'server, or forgotten after a week without an Allow.',
    'Start connecting again from the app. If the same happens, remove this server from the app and add it again.'],
  client_document_refused: ['This app’s description could not be used',
    'The app names a description of itself on the web, and countersign could not fetch it or accept it, '
    + 'so it cannot show you who is asking.',
    'Try again later from the app. If the same happens, the app’s maker has to fix its description.'],
  bad_redirect: ['This app asked to return to an address it did not register',
    'countersign did not send you there: nothing shows that the address belongs to the app.',
    'Start connecting again from the app.'],
  bad_request: ['This connection request is incomplete',
    'It does not say which app is asking.',
    'Start connecting again from the app.'],
};

export function viewConsentRefused(why, { el, show }) {
  const code = Object.hasOwn(REFUSED, why) ? why : 'bad_request';
  const [headline, what, todo] = REFUSED[code];
  show(el('h1', {}, headline),
    el('p', { class: 'error', role: 'alert', 'data-outcome': code }, what),
    el('p', {}, 'Nothing was connected. ', todo),
    el('p', { class: 'back' }, el('a', { href: '/confirm', 'data-nav': true }, 'See what waits for you')));
}

// Who asks: the title and a line on whether anyone vouches for the name.
function whoAsks(el, client) {
  const name = el('span', { 'data-field': 'title-name' }, client.namedItself ? `“${client.name}”` : client.name);
  if (client.verified) {
    return [el('h1', {}, 'Connect ', name, ' from ', client.verifiedBy, '?'),
      el('div', { class: 'outcome ok', 'data-field': 'verified' },
        el('p', { class: 'headline' }, 'Verified: ', client.verifiedBy),
        el('p', {}, client.verifiedBy, ' publishes this app’s name and is where it returns.'))];
  }
  const title = client.namedItself ? el('h1', {}, 'Connect an app calling itself ', name, '?')
    : el('h1', {}, 'Connect an app that gave no name?');
  return [title,
    el('div', { class: 'outcome warn', 'data-field': 'unverified' },
      el('p', { class: 'headline' }, 'Unverified name'),
      el('p', {}, client.namedItself
        ? ['Any app can call itself ', `“${client.name}”`, ': countersign cannot check who made it.']
        : 'It is known only by where it returns.'))];
}

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
  const returnsTo = el('p', { class: 'returns', 'data-field': 'returns-to' }, 'It will return to ',
    el('strong', {}, request.redirectHost),
    request.loopback ? ', an app on this device.' : '.');
  const facts = el('dl', { class: 'consent-facts' },
    el('dt', {}, client.verified ? 'Name' : 'Calls itself'), el('dd', { 'data-field': 'client-name' }, client.name),
    el('dt', {}, client.metadataDocument ? 'Described at' : 'Identified by'),
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
    el('p', { 'data-field': 'decision' }, 'Allow it only if you started connecting ',
      client.verified ? 'this app' : 'an app', ' just now. If you did not, deny.'),
    el('p', { class: 'hint' }, 'It can read what your agents can read. Every write it asks for waits for you ',
      'here, as with any agent. You can revoke it in Settings at any time.'),
    el('div', { class: 'actions' }, allowBtn, denyBtn), note);

  const answer = async (verb, body, btn, label) => {
    allowBtn.disabled = denyBtn.disabled = true;
    const before = btn.textContent;
    btn.textContent = label;
    try {
      const done = await api('POST', `/oauth/requests/${encodeURIComponent(id)}/${verb}`, body);
      const text = `${verb === 'allow' ? 'Connected' : 'Denied'}. Returning you to ${request.redirectHost}…`;
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

  show(whoAsks(el, client), el('p', {}, 'It asks to act for you in countersign.'), returnsTo, facts, form);
}
