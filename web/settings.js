// The Settings view: an index of sections (notifications, passkeys, connections, and for owners
// and admins members, upstream MCP servers and the workspace's switches), each its own screen, and
// the account with sign-out. Loaded only for this view; the page's helpers come in as ``page`` (app.js).
import { dateText } from './dom.js';
import { S } from './strings-on-demand.js';

function toggleEl(el, id, label, checked, hint, onchange) {
  const input = el('input', { type: 'checkbox', id, name: id });
  input.checked = !!checked;
  const note = el('span', { class: 'saved', 'aria-live': 'polite' });
  input.addEventListener('change', async () => {
    input.disabled = true;
    note.textContent = S.saving;
    try {
      await onchange(input.checked);
      note.textContent = S.saved;
    } catch (e) {
      input.checked = !input.checked;
      note.textContent = e.message;
    } finally { input.disabled = false; }
  });
  return el('div', { class: 'toggle' },
    el('label', { for: id }, input, el('span', {}, label)),
    hint ? el('p', { class: 'hint' }, hint) : null, note);
}

// The sections of Settings, in order: [route key, heading, what it holds]. /settings lists them (with
// the account and sign-out); each is its own short screen at /settings/<key> (app.js routes them).
const SECTIONS = Object.entries(S.sections).map(([key, [title, hint]]) => [key, title, hint]);
// Owners and admins only, as before sections: members and the switches with the workspace's settings.
const shownTo = (settings, session) => ({
  members: settings.canEditWorkspace && !!settings.workspace,
  upstreams: !!settings.canEditWorkspace,
  workspace: settings.canEditWorkspace && !!settings.workspace,
  webhooks: !!session && session.person.role === 'owner',
});

export async function viewSettings(page, section) {
  const { el, show } = page;
  const settings = await page.api('GET', '/settings');
  const only = shownTo(settings, page.session);
  const shown = SECTIONS.filter(([key]) => !(key in only) || only[key]);
  if (!section) {
    show(el('h1', {}, S.settings), indexEl(el, shown), accountEl(page));
    return;
  }
  const found = shown.find(([key]) => key === section);
  const back = el('p', { class: 'back settings-back' }, el('a', { href: '/settings', 'data-nav': true }, S.allSettings));
  if (!found) {
    const who = section === 'webhooks' ? S.ownersOnlyNotAdmins : S.ownersOnly; // webhooks: owners, not admins
    show(back, el('h1', {}, S.settings), el('p', { class: 'error', role: 'alert' }, who));
    return;
  }
  const body = await sectionEl(page, settings, section);
  show(back, el('div', { class: 'settings-section', 'data-settings-section': section },
    el('h1', {}, found[1]), body));
}

// The index: one row per section, each a link the size of a thumb.
function indexEl(el, shown) {
  return el('div', { class: 'settings-index' }, el('ul', {}, shown.map(([key, title, hint]) =>
    el('li', {}, el('a', { href: '/settings/' + key, 'data-nav': true, 'data-settings-link': key },
      el('span', { class: 'settings-title' }, title), el('span', { class: 'settings-hint' }, hint))))));
}

// One section's panel, as the single Settings page drew it before it had sections.
async function sectionEl(page, settings, section) {
  const { api, el, announce, navigate } = page;
  if (section === 'notifications') {
    const me = settings.me || {};
    const minutes = Math.round((me.email_interval || 0) / 60);
    return el('section', { class: 'panel' }, el('h2', {}, S.email),
      toggleEl(el, 'agent_requests_email', S.emailWhenAsked, me.agent_requests_email,
        minutes > 0 ? S.emailEvery(minutes) : null,
        (v) => api('PATCH', '/settings/me', { agent_requests_email: v })),
      quietHoursEl(page, me), testEmailEl(page),
      (await import('./settings-channels.js')).channelsEl(page, me, toggleEl), // Slack and push beside email
      await pushEl(page));
  }
  if (section === 'workspace') {
    return el('section', { class: 'panel' }, el('h2', {}, S.workspace),
      Object.entries(S.workspaceSettings).map(([key, [label, hint]]) => toggleEl(el, 'ws_' + key, label, settings.workspace[key], hint,
        (v) => api('PATCH', '/settings/workspace', { [key]: v }))), await lifetimesEl(page));
  }
  if (section === 'members') return membersEl(el, (await api('GET', '/settings/members')).members || []);
  if (section === 'passkeys') {
    const { passkeysPanel } = await import('./passkey-settings.js'); // loaded only for this view
    return passkeysPanel({ api, el, announce, navigate, refresh: () => viewSettings(page, 'passkeys') });
  }
  if (section === 'connections') return connectionsEl(page, (await api('GET', '/connections')).connections || []);
  if (section === 'slack' || section === 'webhooks') { // settings-slack.js, settings-webhooks.js
    const hooks = { copyButton, refresh: () => viewSettings(page, section) };
    if (section === 'slack') return (await import('./settings-slack.js')).slackPanel(page, hooks);
    return (await import('./settings-webhooks.js')).webhooksPanel(page, hooks);
  }
  if (section === 'grants') return (await import('./grants.js')).grantsPanel(page); // loaded only for this view
  if (section === 'policy') return (await import('./policy.js')).policyPanel(page); // loaded only for this view
  const { upstreamsPanel } = await import('./upstream-settings.js'); // docs/gateway.md
  try { return await upstreamsPanel({ api, el }); } catch (e) {
    if (e.status === 401) throw e;
    return el('p', { class: 'muted' }, S.noUpstreams);
  }
}

// This device's push subscription, or null (web/push.js, loaded when signing out).
async function thisDevice() {
  try { return await (await import('./push.js')).thisDevicesSubscription(); } catch (e) { return null; }
}

// Push to this device: web/push.js, loaded only when Notifications is opened (docs/channels.md).
async function pushEl(page) {
  const holder = page.el('div', { class: 'push-settings', 'data-push-settings': true });
  try {
    const { pushPanel } = await import('./push.js');
    await pushPanel(page, holder);
  } catch (e) {
    if (e.status === 401) throw e;
    holder.replaceChildren(page.el('p', { class: 'error' }, e.message));
  }
  return holder;
}

// How long cards wait, their reminders and what a lapse means, in words (docs/policy.md); read only here.
async function lifetimesEl({ api, el }) {
  let words = [];
  try { words = (await api('GET', '/settings/card-lifetimes')).words || []; } catch (e) { if (e.status === 401) throw e; }
  return el('div', { class: 'lifetimes' }, el('h3', {}, S.cardLifetimes),
    el('ul', {}, words.map((line) => el('li', {}, line))), el('p', { class: 'muted' }, S.cardLifetimesHint));
}

// Quiet hours: on or off, from and until (HH:MM) in a time zone; Save sends them (or none).
function quietHoursEl({ api, el }, me) {
  const quiet = me.quiet_hours;
  const on = el('input', { type: 'checkbox', id: 'quiet_on', name: 'quiet_on' });
  on.checked = !!quiet;
  const field = (id, label, attrs) => {
    const input = el('input', { id, name: id, ...attrs });
    const note = el('p', { class: 'error field-error', 'aria-live': 'polite' });
    return [input, note, el('div', { class: 'quiet-field' }, el('label', { for: id }, label), input, note)];
  };
  const [start, startNote, startRow] = field('quiet_start', S.quietFrom, { type: 'time', value: quiet ? quiet.start : '22:00' });
  const [end, endNote, endRow] = field('quiet_end', S.quietUntil, { type: 'time', value: quiet ? quiet.end : '07:00' });
  const [zone, zoneNote, zoneRow] = field('quiet_zone', S.quietZone, {
    type: 'text', autocomplete: 'off', value: quiet ? quiet.zone : Intl.DateTimeFormat().resolvedOptions().timeZone });
  const notes = { start: startNote, end: endNote, zone: zoneNote };
  const now = el('p', { class: 'hint quiet-now' });
  const showNow = (until) => {
    now.replaceChildren(...(until ? [].concat(S.quietNow(el('time', { datetime: until }, dateText(until)))) : []));
    now.hidden = !until;
  };
  showNow(me.quiet_until);
  const note = el('span', { class: 'saved', 'aria-live': 'polite' });
  const save = el('button', { type: 'button', class: 'secondary' }, S.saveQuietHours);
  save.addEventListener('click', async () => {
    save.disabled = true;
    Object.values(notes).forEach((n) => { n.textContent = ''; });
    note.textContent = S.saving;
    try {
      const body = on.checked ? { start: start.value, end: end.value, zone: zone.value.trim() } : null;
      const answer = await api('PATCH', '/settings/me', { quiet_hours: body });
      showNow(answer && answer.me ? answer.me.quiet_until : null);
      note.textContent = S.saved;
    } catch (e) {
      const part = (e.field || '').split('.').pop();
      if (e.status === 422 && notes[part]) { notes[part].textContent = e.message; note.textContent = ''; } else note.textContent = e.message;
    } finally { save.disabled = false; }
  });
  return el('div', { class: 'quiet-hours' },
    el('div', { class: 'toggle' }, el('label', { for: 'quiet_on' }, on, el('span', {}, S.quietHours)),
      el('p', { class: 'hint' }, S.quietHint)),
    el('div', { class: 'quiet-times' }, startRow, endRow), zoneRow, now, el('div', { class: 'actions' }, save), note);
}

// A test email now: the answer's sentence (or the refusal's); when asked too often, waits Retry-After.
function testEmailEl({ api, el }) {
  const button = el('button', { type: 'button', class: 'secondary', 'data-test-email': true }, S.sendTestEmail);
  const answer = el('p', { class: 'test-email-answer', 'aria-live': 'polite' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    answer.textContent = S.sending;
    let wait = 0;
    try {
      answer.textContent = (await api('POST', '/settings/me/test-email')).message;
    } catch (e) {
      answer.textContent = e.message;
      if (e.status === 429) wait = e.retryAfter || 60;
    } finally {
      if (wait) setTimeout(() => { button.disabled = false; }, wait * 1000);
      else button.disabled = false;
    }
  });
  return el('div', { class: 'test-email' }, el('div', { class: 'actions' }, button), answer);
}

function accountEl({ api, el, navigate, setSession, session: s }) {
  const signOut = el('button', { type: 'button', class: 'secondary' }, S.signOut);
  signOut.addEventListener('click', async () => {
    signOut.disabled = true;
    const device = await thisDevice(); // its push subscription goes with the session (docs/channels.md)
    try { await api('POST', '/signout', device ? { pushEndpoint: device.endpoint } : undefined); } catch (e) { /* signed out either way */ }
    if (device) await device.unsubscribe().catch(() => null);
    setSession(null);
    navigate('/signin');
  });
  return el('section', { class: 'panel' }, el('h2', {}, S.account),
    el('p', {}, S.signedInAsIn(el('strong', {}, s.person.email), s.person.role,
      s.workspace && s.workspace.name ? el('strong', {}, s.workspace.name) : null)),
    signOut);
}

function membersEl(el, members) {
  const list = el('ul', { class: 'connections members' });
  for (const m of members) {
    list.append(el('li', {},
      el('div', { class: 'conn-name' }, el('strong', {}, m.name || m.email), m.name ? [' · ', m.email] : null,
        m.you ? S.you_ : null),
      el('span', { class: 'badge' }, m.role)));
  }
  return el('section', { class: 'panel' }, el('h2', {}, S.members),
    el('p', { class: 'hint' }, S.rolesHint),
    list);
}

function copyButton(el, input) {
  const btn = el('button', { type: 'button', class: 'secondary' }, S.copy);
  btn.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(input.value);
    } catch (e) {
      input.select();
      try { document.execCommand('copy'); } catch (e2) { /* selected for manual copy */ }
    }
    btn.textContent = S.copied;
    setTimeout(() => { btn.textContent = S.copy; }, 2000);
  });
  return btn;
}

// What revoking a connection does, in the words of its kind.
function revokePrompt(c) {
  return c.oauth ? S.revokeOAuth(c.name) : S.revokeToken;
}

// A client allowed more than once (the API names each earlier authorization's latest one): the
// latest is the row, the earlier ones are listed under it.
function earlierByLatest(connections) {
  const earlier = new Map();
  for (const c of connections) {
    const latest = c.oauth && c.oauth.earlierOf;
    if (latest) earlier.set(latest, [...(earlier.get(latest) || []), c]);
  }
  return earlier;
}

function connectionsEl({ api, el, announce, timeEl }, connections) {
  const list = el('ul', { class: 'connections' });
  const empty = el('p', { class: 'muted' }, S.noConnections);
  const earlier = earlierByLatest(connections);
  const earlierEl = (group) => {
    const summary = el('summary', {});
    const count = () => {
      const live = group.filter((g) => !g.revoked).length;
      summary.textContent = S.earlierAuthorizations(group.length, live);
    };
    count();
    const rows = el('ul', { class: 'connections' }, group.map((g) => render(g, count)));
    return el('details', { class: 'earlier', 'data-field': 'earlier' }, summary, rows);
  };
  const render = (c, changed) => {
    const li = el('li', { 'data-connection-id': c.id });
    const when = timeEl(c.createdAt, S.created);
    const used = c.lastUsedAt ? timeEl(c.lastUsedAt, S.lastUsed) : el('span', { class: 'muted' }, S.neverUsed);
    li.append(el('div', { class: 'conn-name' }, el('strong', {}, c.name), when ? [' · ', when] : null,
      ' · ', el('span', { class: 'last-used' }, used)));
    if (c.oauth && c.oauth.connected === false) {
      li.append(el('div', { class: 'conn-oauth muted' }, c.revoked ? S.neverFinished : S.waitingForClient,
      el('span', { class: 'mono' }, c.oauth.redirectHost)));
    } else if (c.oauth) {
      li.append(el('div', { class: 'conn-oauth muted' }, S.connectedWithOAuth,
        el('span', { class: 'mono' }, c.oauth.redirectHost)));
    }
    const group = earlier.get(c.id);
    if (c.revoked) {
      li.append(el('span', { class: 'badge' }, S.revoked));
      if (c.revokedWhy && c.revokedReason !== 'never_finished') {
        li.append(el('p', { class: 'revoked-why', 'data-field': 'revoked-why' }, c.revokedWhy));
      }
      if (group) li.append(earlierEl(group));
      return li;
    }
    const revoke = el('button', { type: 'button', class: 'secondary', 'data-action': 'revoke' }, S.revoke);
    const yes = el('button', { type: 'button', class: 'danger', 'data-action': 'revoke-yes' }, S.revokeIt);
    const no = el('button', { type: 'button', class: 'secondary' }, S.cancel);
    const ask = el('div', { class: 'confirm-revoke', hidden: true },
      el('p', {}, revokePrompt(c)),
      el('div', { class: 'actions' }, yes, no));
    revoke.addEventListener('click', () => { revoke.hidden = true; ask.hidden = false; });
    no.addEventListener('click', () => { ask.hidden = true; revoke.hidden = false; });
    yes.addEventListener('click', async () => {
      yes.disabled = no.disabled = true;
      try {
        const done = await api('POST', `/connections/${encodeURIComponent(c.id)}/revoke`);
        const now = done && done.connection ? done.connection : {};
        Object.assign(c, { revoked: true, revokedReason: now.revokedReason || null, revokedWhy: now.revokedWhy || null });
        li.replaceWith(render(c, changed));
        if (changed) changed();
        announce(S.wasRevoked(c.name));
      } catch (e) {
        yes.disabled = no.disabled = false;
        ask.append(el('p', { class: 'error', role: 'alert' }, e.message));
      }
    });
    li.append(revoke, ask);
    if (group) li.append(earlierEl(group));
    return li;
  };
  const shown = connections.filter((c) => !(c.oauth && c.oauth.earlierOf));
  for (const c of shown) list.append(render(c));
  empty.hidden = connections.length > 0;

  const name = el('input', { type: 'text', id: 'connection-name', name: 'name', required: true, maxlength: 100,
    autocomplete: 'off', placeholder: S.connectionPlaceholder });
  const create = el('button', { type: 'submit', class: 'primary' }, S.createConnection);
  const out = el('div', { class: 'new-token', 'aria-live': 'polite' });
  const form = el('form', { class: 'create-connection' },
    el('label', { for: 'connection-name' }, S.connectionName), name, create, out);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    create.disabled = true;
    out.replaceChildren();
    try {
      const made = await api('POST', '/connections', { name: name.value.trim() });
      const token = el('input', { type: 'text', readonly: true, id: 'new-token', class: 'secret', 'aria-label': S.token });
      token.value = made.token;
      const url = el('input', { type: 'text', readonly: true, id: 'new-mcp-url', 'aria-label': S.mcpUrl });
      url.value = made.mcpUrl || '';
      const done = el('button', { type: 'button', class: 'secondary' }, S.done);
      done.addEventListener('click', () => out.replaceChildren());
      out.append(el('div', { class: 'outcome ok' },
        el('p', { class: 'headline' }, S.tokenFor(made.connection.name)),
        el('p', {}, S.copyNow),
        el('div', { class: 'copy-row' }, token, copyButton(el, token)),
        el('p', { class: 'label' }, S.mcpUrl),
        el('div', { class: 'copy-row' }, url, copyButton(el, url)),
        done));
      list.append(render(made.connection));
      empty.hidden = true;
      name.value = '';
      token.focus();
      token.select();
    } catch (e) {
      out.append(el('p', { class: 'error', role: 'alert' }, e.message));
    } finally { create.disabled = false; }
  });

  return el('section', { class: 'panel' }, el('h2', {}, S.connections),
    el('p', { class: 'hint' }, S.connectionsHint),
    list, empty, form);
}
