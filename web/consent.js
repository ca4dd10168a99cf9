// countersign confirm page: the consent view of OAuth, at /confirm?authorize=<request id>.
// An MCP client sent the person here from /oauth/authorize. They see who asks and where the answer
// goes, choose the workspace, and Allow or Deny; the page then sends them back to the client's
// redirect URI, replacing itself in the history (the answer's code is never kept by this page).
// A client's name is what it says of itself unless a host vouches for it (its metadata document's
// host, where it also returns): the view says which. A request /oauth/authorize refused without a
// way back to the client comes here as /confirm?authorize_error=<why> (viewConsentRefused).
// Every piece of text that comes from data is set with textContent (through el()).
import { S } from './strings-on-demand.js';

export function viewConsentRefused(why, { el, show }) {
  const code = Object.hasOwn(S.refusedClients, why) ? why : 'bad_request';
  const [headline, what, todo] = S.refusedClients[code];
  show(el('h1', {}, headline),
    el('p', { class: 'error', role: 'alert', 'data-outcome': code }, what),
    el('p', {}, S.nothingConnected(todo)),
    el('p', { class: 'back' }, el('a', { href: '/confirm', 'data-nav': true }, S.seeWhatWaits)));
}

// Who asks: the title and a line on whether anyone vouches for the name.
function whoAsks(el, client) {
  const name = el('span', { 'data-field': 'title-name' }, client.namedItself ? S.quoted(client.name) : client.name);
  if (client.verified) {
    return [el('h1', {}, S.connectVerified(name, client.verifiedBy)),
      el('div', { class: 'outcome ok', 'data-field': 'verified' },
        el('p', { class: 'headline' }, S.verifiedBy(client.verifiedBy)),
        el('p', {}, S.publishesName(client.verifiedBy)))];
  }
  const title = client.namedItself ? el('h1', {}, S.connectCalling(name)) : el('h1', {}, S.connectNameless);
  return [title,
    el('div', { class: 'outcome warn', 'data-field': 'unverified' },
      el('p', { class: 'headline' }, S.unverifiedName),
      el('p', {}, client.namedItself ? S.anyAppCanCall(S.quoted(client.name)) : S.knownByReturn))];
}

export async function viewConsent(id, { api, el, show, announce }) {
  let request;
  try {
    request = await api('GET', '/oauth/requests/' + encodeURIComponent(id));
  } catch (e) {
    if (e.status === 401) throw e;
    show(el('h1', {}, S.connectAnAgent),
      el('p', { class: 'error', role: 'alert', 'data-outcome': e.code || 'error' }, e.message),
      el('p', { class: 'back' }, el('a', { href: '/confirm', 'data-nav': true }, S.seeWhatWaits)));
    return;
  }
  const client = request.client;
  const returnsTo = el('p', { class: 'returns', 'data-field': 'returns-to' },
    S.returnsTo(el('strong', {}, request.redirectHost), request.loopback));
  const facts = el('dl', { class: 'consent-facts' },
    el('dt', {}, client.verified ? S.nameLabel : S.callsItself), el('dd', { 'data-field': 'client-name' }, client.name),
    el('dt', {}, client.metadataDocument ? S.describedAt : S.identifiedBy),
    el('dd', { 'data-field': 'client-host' }, client.metadataDocument ? client.host : S.aRegistration),
    el('dt', {}, S.sendsBackTo),
    el('dd', { 'data-field': 'redirect-host' }, request.redirectHost,
      request.loopback ? el('span', { class: 'muted' }, S.onThisDevice) : null),
    el('dt', {}, S.fullAddress), el('dd', { class: 'mono', 'data-field': 'redirect-uri' }, request.redirectUri));

  const choices = request.workspaces.map((w, i) => {
    const input = el('input', { type: 'radio', name: 'workspace', id: 'ws-' + i, value: w.id });
    input.checked = i === 0;
    return el('div', { class: 'choice' }, input, el('label', { for: 'ws-' + i }, w.name));
  });
  const workspace = el('fieldset', { class: 'workspaces' }, el('legend', {}, S.connectItTo), choices);

  const allowBtn = el('button', { type: 'submit', class: 'primary', 'data-action': 'allow' }, S.allow);
  const denyBtn = el('button', { type: 'button', class: 'secondary', 'data-action': 'deny' }, S.deny);
  const note = el('div', { class: 'outcome-slot', 'aria-live': 'polite' });
  const form = el('form', { class: 'consent' }, workspace,
    el('p', { 'data-field': 'decision' }, S.allowOnlyIf(client.verified)),
    el('p', { class: 'hint' }, S.consentHint),
    el('div', { class: 'actions' }, allowBtn, denyBtn), note);

  const answer = async (verb, body, btn, label) => {
    allowBtn.disabled = denyBtn.disabled = true;
    const before = btn.textContent;
    btn.textContent = label;
    try {
      const done = await api('POST', `/oauth/requests/${encodeURIComponent(id)}/${verb}`, body);
      const text = S.consentDone(verb === 'allow', request.redirectHost);
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
    answer('allow', { workspaceId: chosen ? chosen.value : '' }, allowBtn, S.allowing);
  });
  denyBtn.addEventListener('click', () => answer('deny', undefined, denyBtn, S.denying));

  show(whoAsks(el, client), el('p', {}, S.asksToAct), returnsTo, facts, form);
}
