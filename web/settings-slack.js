// Settings → Slack (docs/channels.md, "Slack"): an owner connects the workspace's Slack app (its
// token and signing secret sent once, stored sealed, never shown again), picks where requests go
// and disconnects it; each person links their Slack user with a one-time code, and unlinks it.
import { dateText } from './dom.js';
import { testButtonEl } from './settings-channels.js';
import { S } from './strings-on-demand.js';

export async function slackPanel(page, { copyButton, refresh }) {
  const { api, el, announce } = page;
  const view = await api('GET', '/settings/slack');
  const note = el('div', { 'aria-live': 'polite' });
  const fail = (e) => note.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  const parts = [];
  if (view.connected) {
    parts.push(el('p', { 'data-slack': 'connected' }, S.slackConnectedTo(el('strong', {}, view.teamName || view.teamId))),
      el('p', {}, view.channel ? S.slackGoesToChannel(el('code', {}, view.channel)) : S.slackGoesToDms));
    if (view.canManage) parts.push(channelEl(page, view, fail, refresh), disconnectEl(page, fail, refresh));
  } else if (view.canManage) {
    parts.push(connectEl(page, view, copyButton, refresh));
  } else {
    parts.push(el('p', { class: 'muted', 'data-slack': 'not-connected' }, S.slackNotConnected));
  }
  const panel = el('section', { class: 'panel', 'data-section': 'slack' }, el('h2', {}, S.sections.slack[0]), parts, note);
  if (!view.connected) return panel;
  const mine = el('section', { class: 'panel', 'data-section': 'slack-link' }, el('h2', {}, S.yourSlackUser));
  if (view.link) {
    const unlink = el('button', { type: 'button', class: 'secondary', 'data-action': 'unlink-slack' }, S.unlink);
    unlink.addEventListener('click', async () => {
      unlink.disabled = true;
      try { await api('DELETE', '/settings/slack/link'); announce(S.unlinked); await refresh(); }
      catch (e) { unlink.disabled = false; fail(e); }
    });
    mine.append(el('p', { 'data-slack-link': view.link.slackUserId }, view.link.slackUserName
      ? S.linkedAsName(el('strong', {}, '@' + view.link.slackUserName)) // the id for a link made before names were kept
      : S.linkedAs(el('code', {}, view.link.slackUserId))),
    el('div', { class: 'actions' }, unlink), testButtonEl(page, '/settings/slack/test', S.sendTestSlack, 'slack'));
  } else {
    mine.append(el('p', { class: 'muted' }, S.notLinked), linkCodeEl(page, copyButton, fail, refresh));
  }
  return [panel, mine];
}

function field(el, id, label, attrs, hint) {
  const input = el('input', { id, name: id, autocomplete: 'off', spellcheck: 'false', ...attrs });
  return [input, el('label', { for: id }, label), input, hint ? el('p', { class: 'hint' }, hint) : null];
}

// Not connected, an owner: how to create the app, in words, and the form that connects it.
function connectEl({ api, el, announce }, view, copyButton, refresh) {
  const url = (id, label, value) => {
    const input = el('input', { type: 'text', readonly: true, id, 'aria-label': label });
    input.value = value;
    return [el('p', { class: 'label' }, label), el('div', { class: 'copy-row' }, input, copyButton(el, input))];
  };
  const [first, second, third] = S.createSlackAppSteps;
  const steps = el('ol', { class: 'slack-steps' },
    el('li', {}, first[0], el('a', { href: 'https://api.slack.com/apps', target: '_blank', rel: 'noopener noreferrer' },
      first[1]), first[2]),
    el('li', {}, second[0],
      url('slack-interactivity-url', S.interactivityUrl, view.requestUrls.interactivity),
      url('slack-command-url', S.slashCommandUrl, view.requestUrls.slashCommand)),
    el('li', {}, third[0]));
  const [token, ...tokenRow] = field(el, 'slack-bot-token', S.botToken, { type: 'password', required: true,
    autocomplete: 'new-password', placeholder: S.botTokenPlaceholder });
  const [secret, ...secretRow] = field(el, 'slack-signing-secret', S.signingSecret, { type: 'password',
    required: true, autocomplete: 'new-password' }, S.slackSecretsHint);
  const [channel, ...channelRow] = field(el, 'slack-new-channel', S.slackChannel, { type: 'text', maxlength: 32,
    placeholder: S.channelPlaceholder }, S.slackChannelHint);
  const send = el('button', { type: 'submit', class: 'primary', 'data-action': 'connect-slack' }, S.connectSlack);
  const note = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'connect-slack', novalidate: true }, tokenRow, secretRow, channelRow, send, note);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    note.replaceChildren();
    send.disabled = true;
    for (const f of [token, secret, channel]) f.removeAttribute('aria-invalid');
    const body = { botToken: token.value.trim(), signingSecret: secret.value.trim() };
    if (channel.value.trim()) body.channel = channel.value.trim();
    try {
      await api('PUT', '/settings/slack', body);
      token.value = secret.value = '';
      announce(S.slackConnected);
      await refresh();
    } catch (e) {
      send.disabled = false;
      const bad = { botToken: token, signingSecret: secret, channel }[(e.field || '').split('.').pop()];
      if (bad) { bad.setAttribute('aria-invalid', 'true'); bad.focus(); }
      note.replaceChildren(el('p', { class: 'error', role: 'alert', 'data-field': e.field || '' }, e.message));
    }
  });
  return el('div', { class: 'slack-connect' }, el('h3', {}, S.createSlackApp), steps, form);
}

function channelEl({ api, el, announce }, view, fail, refresh) {
  const [input, ...row] = field(el, 'slack-channel', S.slackChannel, { type: 'text', maxlength: 32,
    placeholder: S.channelPlaceholder, value: view.channel || '' }, S.slackChannelHint);
  const save = el('button', { type: 'button', class: 'secondary', 'data-action': 'slack-channel' }, S.saveChannel);
  save.addEventListener('click', async () => {
    save.disabled = true;
    try { await api('PATCH', '/settings/slack', { channel: input.value.trim() || null }); announce(S.saved); await refresh(); }
    catch (e) { save.disabled = false; fail(e); }
  });
  return el('div', { class: 'slack-channel' }, row, el('div', { class: 'actions' }, save));
}

function disconnectEl({ api, el, announce }, fail, refresh) {
  const ask = el('button', { type: 'button', class: 'secondary', 'data-action': 'disconnect-slack' }, S.disconnectSlack);
  const yes = el('button', { type: 'button', class: 'danger', 'data-action': 'disconnect-slack-yes' }, S.disconnectIt);
  const no = el('button', { type: 'button', class: 'secondary' }, S.cancel);
  const sure = el('div', { class: 'confirm-revoke', hidden: true }, el('p', {}, S.disconnectSlackPrompt),
    el('div', { class: 'actions' }, yes, no));
  ask.addEventListener('click', () => { ask.hidden = true; sure.hidden = false; });
  no.addEventListener('click', () => { sure.hidden = true; ask.hidden = false; });
  yes.addEventListener('click', async () => {
    yes.disabled = no.disabled = true;
    try { await api('DELETE', '/settings/slack'); announce(S.slackDisconnected); await refresh(); }
    catch (e) { yes.disabled = no.disabled = false; fail(e); }
  });
  return el('div', { class: 'actions' }, ask, sure);
}

// A one-time code and where to type it; the link shows once the page is drawn again.
function linkCodeEl({ api, el }, copyButton, fail, refresh) {
  const get = el('button', { type: 'button', class: 'primary', 'data-action': 'slack-link-code' }, S.getLinkCode);
  const out = el('div', { class: 'link-code', 'aria-live': 'polite' });
  get.addEventListener('click', async () => {
    get.disabled = true;
    try {
      const made = await api('POST', '/settings/slack/link-code');
      const command = el('input', { type: 'text', readonly: true, id: 'slack-link-command', 'aria-label': S.linkCodeIs });
      command.value = made.command;
      const check = el('button', { type: 'button', class: 'secondary', 'data-action': 'slack-link-check' }, S.checkLink);
      check.addEventListener('click', () => refresh());
      out.replaceChildren(el('p', {}, S.sendLinkCode(el('code', { 'data-link-command': true }, made.command))),
        el('div', { class: 'copy-row' }, command, copyButton(el, command)),
        el('p', { class: 'hint' }, S.linkCodeExpires(el('time', { datetime: made.expiresAt }, dateText(made.expiresAt)))),
        el('div', { class: 'actions' }, check));
    } catch (e) { fail(e); } finally { get.disabled = false; }
  });
  return el('div', {}, el('div', { class: 'actions' }, get), out);
}
